"""The `analyze` step (Stage 1): runs the reference once and reports its operations, FLOPs and
minimum bytes (analyze.py says how each is counted); for a Triton or CUDA program, the bytes of
its launcher's tensors (docs/stage1-programs.md)."""

import copy

from .common import StepError, as_output_list, to_device
from .loading import construct, import_torch, load_problem


def step_analyze(request):
    """Runs the reference Model once and reports its operations, FLOPs and minimum bytes
    (analyze.py says how each is counted), with the device name torch reports on cuda."""
    from .tensors import generate_inputs

    device = request.get("device", "cpu")
    torch = import_torch(device)
    problem = load_problem(request["problem"])
    program = getattr(problem, "KERNELPRO_PROGRAM", None)
    if program is not None:
        return _analyze_program(torch, request, problem, program, device)
    init_seed = request.get("init_seed", 42)
    torch.manual_seed(init_seed)
    try:
        init_inputs = problem.get_init_inputs()
        model = construct(torch, problem.Model, init_inputs, init_seed, device)
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error",
                        f"Model(*get_init_inputs()) failed: {type(e).__name__}: {e}")
    try:
        inputs = to_device(generate_inputs(problem, request.get("seed", 1)), device)
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")
    result = _analyze_reference(torch, request, problem, model, inputs, device)
    _add_device(torch, result, device)
    return result


def _analyze_reference(torch, request, problem, model, inputs, device):
    """analyze.analyze on `model`: on meta tensors first on cpu, for real when meta fails."""
    from . import analyze as analyze_mod

    # Shapes and dtypes are all the analysis needs: on cpu the call runs on meta tensors first
    # (no arithmetic, instant even for large GEMMs) and falls back to a real call when the
    # reference does something meta tensors cannot (data-dependent code, tensors made in forward).
    result = None
    fallback_note = None
    if request.get("meta", device == "cpu"):
        try:
            result = analyze_mod.analyze(torch, problem, copy.deepcopy(model).to("meta"),
                                         to_device(inputs, "meta"), "meta")
            result["executed_on"] = "meta"
        except Exception as e:  # noqa: BLE001
            fallback_note = (f"meta-tensor run failed ({type(e).__name__}); "
                             "ran the reference for real")
    if result is None:
        try:
            result = analyze_mod.analyze(torch, problem, model, inputs, device)
        except StepError:
            raise
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error",
                            f"the reference forward failed: {type(e).__name__}: {e}")
        result["executed_on"] = device
        if fallback_note:
            result["flops_notes"].append(fallback_note)
    return result


def _add_device(torch, result, device):
    result.update(status="ok", device=device, torch_version=torch.__version__, device_name=None)
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        result.update(device_name=p.name, compute_capability=[p.major, p.minor],
                      sm_count=p.multi_processor_count)


# Kinds whose launcher can run on the cpu worker: a Triton or CUDA program needs the GPU it
# targets (a meta or cpu tensor handed to its kernels is a crash, not a shape).
_PROGRAM_KINDS_RUNNABLE_ON_CPU = ("python",)
NO_PROGRAM_FLOPS = ("none: the program's kernels are opaque to torch's operator counter; "
                    "ncu measures them")


def _analyze_program(torch, request, problem, program, device):
    """Stage 1 for a Triton or CUDA program (docs/stage1-programs.md).

    Minimum bytes come from the launcher's tensors: its inputs and init tensors read once, its
    outputs written once. The outputs' shapes come from the PyTorch REFERENCE on meta tensors
    when the program has one, else from one real run of the program on the GPU it targets; on
    cpu without a REFERENCE a Triton or CUDA program's outputs, and so its bytes, are unknown.
    FLOPs are the reference's counted ones; without a reference they are left to ncu."""
    from .analyze import analyze_program_bytes
    from .tensors import generate_inputs

    init_seed = request.get("init_seed", 42)
    torch.manual_seed(init_seed)
    kind, entry, reference = program.get("kind"), program.get("entry"), program.get("reference")
    try:
        init_inputs = problem.get_init_inputs()
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error",
                        f"get_init_inputs() failed: {type(e).__name__}: {e}")
    try:
        inputs = to_device(generate_inputs(problem, request.get("seed", 1)), device)
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")

    ref = None
    outputs = None  # the program's output tensors, from one real run
    executed_on = None
    if reference:
        try:
            model = construct(torch, problem.Model, init_inputs, init_seed, device)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"the reference's Model(*get_init_inputs()) failed: "
                                             f"{type(e).__name__}: {e}")
        ref = _analyze_reference(torch, request, problem, model, inputs, device)
        executed_on = ref["executed_on"]
        shapes_from = ("the PyTorch reference on meta tensors" if executed_on == "meta"
                       else f"the PyTorch reference run on {executed_on}")
    elif device == "cuda" or kind in _PROGRAM_KINDS_RUNNABLE_ON_CPU:
        try:
            wrapper = construct(torch, problem.BaselineModel, init_inputs, init_seed, device)
            with torch.no_grad():
                outputs = as_output_list(wrapper(*inputs))
            if device == "cuda":
                torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"the program's {entry}() failed: "
                                             f"{type(e).__name__}: {e}")
        executed_on = device
        shapes_from = f"one run of the program on {device}"
    else:
        shapes_from = None

    result = analyze_program_bytes(torch, inputs, init_inputs, outputs, ref)
    result["program"] = {"kind": kind, "entry": entry, "reference": reference}
    result["executed_on"] = executed_on
    launcher = "the launcher's tensors: inputs and init tensors read once, outputs written once"
    if shapes_from is not None:
        result["bytes_source"] = f"{launcher} (output shapes from {shapes_from})"
    else:
        result["bytes_source"] = (
            f"unknown: a {kind} program runs only on the GPU it targets and has no REFERENCE to "
            f"give its output shapes on meta tensors; its inputs and init tensors are known "
            f"({result['input_bytes'] + result['parameter_bytes']} bytes), its outputs are not")
    if ref is not None:
        result["flops_source"] = ("FLOPs counted on the PyTorch reference "
                                  f"({ref['flops_source']})")
    else:
        result["flops_source"] = NO_PROGRAM_FLOPS
    result["seconds"] = (ref or {}).get("seconds", 0.0)
    _add_device(torch, result, device)
    return result
