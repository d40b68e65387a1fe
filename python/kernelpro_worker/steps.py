"""The worker's steps. Each takes the request dict and returns the result dict.

A step never lets a candidate's failure escape as an exception: the failure is classified
(compile_error, runtime_error, ...) and returned. Reference outputs are computed, and outputs
compared, only in processes that never import the candidate.

What a candidate's process is told: the inputs tree (CACHE/inputs/<key>), the reference's
metadata inline, its own build scope and its output directory; never where the reference's
expected outputs are (CACHE/references/<key>) or the cache as a whole. Every file crosses
processes as plain data (plain.py), and every reference file is checked against the content
hashes the reference step recorded before it is used; a file that fails is reported with status
`reference_changed` and the binary recomputes the reference.
"""

import copy
import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
import traceback

from . import optrace, plain, programs
from . import scan as scan_mod
from .common import (CUDA_ON_CPU, StepError, as_output_list, bounded, load_module, load_problem,
                     read_json, sha256_file, sha256_text, to_device, write_json)

REFERENCE_LAYOUT = 4  # bump when the reference cache's contents change
EXT = ".kpt"  # plain data files
# A trial's inputs larger than this are not stored: every process that needs them regenerates
# them from their seed (what reading them back costs, about) and checks them against the digest
# the reference step recorded. A request's `store_inputs_up_to` overrides it (tests).
STORE_INPUTS_UP_TO = 1 << 20

# ----------------------------------------------------------------------------------------------
# Process set-up


def _import_torch(device):
    import torch

    if device == "cuda":
        if not torch.cuda.is_available():
            raise StepError("device_error", "device 'cuda' requested but torch.cuda.is_available() is "
                            "False (no GPU or no CUDA build of torch); use --device cpu")
        torch.cuda.init()
        if "TORCH_CUDA_ARCH_LIST" not in os.environ:
            major, minor = torch.cuda.get_device_capability()
            # Hopper and newer: build for the architecture-specific target (sm_90a, sm_100a) so
            # candidates may use warpgroup MMA, TMA multicast and the like; the binary only has to
            # run on this device.
            suffix = "a" if major >= 9 else ""
            os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}{suffix}"
    return torch


def _sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def _tensor_meta(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype)}


def _reference_changed(what, error):
    """The status the binary answers by recomputing the reference: `what` ("the reference's
    expected/check_0.kpt") is not what the reference step wrote."""
    detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return StepError("reference_changed", f"{what} changed after the reference step wrote it "
                     f"({detail})")


def _read_input(request, name):
    """Trial inputs (or the init inputs) from the inputs tree, checked against the manifest the
    binary passed from the reference step's result; or, for inputs too large to be stored,
    regenerated from the recipe it passed (`inputs_recipe`) and checked against its digest."""
    rel = name + EXT
    sha = (request.get("inputs_manifest") or {}).get(rel)
    recipe = request.get("inputs_recipe") or {}
    if sha is None and name in (recipe.get("trials") or {}):
        return _regenerate_input(request, name, recipe)
    if sha is None:
        raise _reference_changed(f"the problem's input file {rel}", "not in the inputs manifest")
    try:
        return plain.load(os.path.join(request["inputs_dir"], rel), sha256=sha)
    except (OSError, plain.PlainError) as e:
        raise _reference_changed(f"the problem's input file {rel}", e) from None


_PROBLEMS = {}  # problem path -> module, for regenerating inputs in this process


def _regenerate_input(request, name, recipe):
    """A trial's inputs as the reference step made them: get_inputs() under the trial's seed, on
    the device, with the extra trials' perturbation; they must hash to the recorded digest."""
    from . import tensors

    what = f"the problem's inputs of trial {name}"
    trial = recipe["trials"][name]
    try:
        path = recipe["problem"]
        if path not in _PROBLEMS:
            _PROBLEMS[path] = load_problem(path)
        inputs = to_device(tensors.generate_inputs(_PROBLEMS[path], int(trial["seed"])),
                           request["device"])
        variant = trial.get("variant")
        if variant is not None:
            inputs = tensors.signed_mixed_scale(inputs, int(trial["seed"]),
                                                signs=bool(variant["signs"]),
                                                scales=bool(variant["scales"]))
        digest = plain.digest(list(inputs))
    except Exception as e:  # noqa: BLE001 - whatever failed, the binary recomputes the reference
        raise _reference_changed(what, f"regenerating them from their seed failed: "
                                 f"{type(e).__name__}: {bounded(str(e), 300)}") from None
    if digest != trial.get("sha256"):
        raise _reference_changed(what, "regenerated from their seed, they differ from what the "
                                 "reference step recorded")
    return inputs


def _load_candidate(request, torch, guard_holder, cache=None):
    """Imports the candidate with the build cache installed. Returns (module, build cache).
    A caller that passes its own `cache` still sees what was built when the import fails."""
    from .guard import PatchGuard

    cache = cache or _build_cache(request)
    cache.install()
    optrace.OpTrace()  # imports what the trace uses, so the guard's snapshot includes it
    guard_holder.append(PatchGuard())
    path = request["candidate"]
    try:
        module = load_module(path, "kp_candidate")
    except StepError:
        raise
    except SyntaxError as e:
        raise StepError("compile_error", f"candidate has a Python syntax error at line {e.lineno}: {e.msg}")
    except Exception as e:  # noqa: BLE001 - anything the candidate raises at import
        if request.get("device") == "cpu" and _cuda_arch_detection_failed(e):
            raise StepError("compile_error", CUDA_ON_CPU + " (it builds a CUDA extension)")
        raise StepError("runtime_error", f"candidate failed at import: {type(e).__name__}: {e}\n"
                        + bounded(traceback.format_exc(), 4000))
    if not hasattr(module, "ModelNew"):
        raise StepError("compile_error", "candidate does not define class ModelNew")
    return module, cache


def _cuda_arch_detection_failed(e):
    """torch's cpp_extension.load of .cu sources on a machine without a GPU fails while it reads
    the device's architecture, with an IndexError from _get_cuda_arch_flags."""
    if not isinstance(e, IndexError):
        return False
    frames = traceback.extract_tb(e.__traceback__)
    return any(frame.name == "_get_cuda_arch_flags" for frame in frames)


def _construct(torch, cls, init_inputs, seed, device):
    torch.manual_seed(seed)
    model = cls(*init_inputs)
    return model.to(device) if hasattr(model, "to") else model


def _classify_runtime(e):
    text = f"{type(e).__name__}: {e}"
    low = text.lower()
    if "out of memory" in low or "can't allocate memory" in low or "cannot allocate memory" in low:
        return "runtime_error", "out of memory: " + bounded(text, 1500)
    if "illegal memory access" in low or "misaligned address" in low or "illegal instruction" in low:
        return "runtime_error", "CUDA fault: " + bounded(text, 1500)
    return "runtime_error", bounded(text, 3000)


# ----------------------------------------------------------------------------------------------
# scan


def step_scan(request):
    with open(request["problem"]) as f:
        problem = scan_mod.scan_problem(f.read(), request["problem"])
    result = {"problem": problem}
    if not problem["ok"]:
        return result
    if request.get("candidate"):
        with open(request["candidate"]) as f:
            result["candidate"] = scan_mod.scan_candidate(
                f.read(), set(problem["reference_ops"]), request.get("torch_ops_policy", "forbid"),
                request.get("allowed_ops", []), request.get("fp32_problem", True),
                request["candidate"])
    return result


# ----------------------------------------------------------------------------------------------
# inspect


def step_inspect(request):
    import torch
    from torch.utils import cpp_extension

    info = {
        "python": sys.executable,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "include_paths": cpp_extension.include_paths(),
        "library_paths": cpp_extension.library_paths(),
        "cuda_available": torch.cuda.is_available(),
    }
    device = request.get("device", "cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda":
        _import_torch("cuda")
        p = torch.cuda.get_device_properties(0)
        info.update(gpu_name=p.name, compute_capability=[p.major, p.minor],
                    sm_count=p.multi_processor_count, memory_bytes=p.total_memory,
                    l2_bytes=getattr(p, "L2_cache_size", None), device_count=torch.cuda.device_count(),
                    driver=_driver_version())
    else:
        info.update(gpu_name=None, cpu_count=os.cpu_count())
    result = {"device": device, "info": info}
    if request.get("problem"):
        result["reference"] = _reference_cost(torch, load_problem(request["problem"]), device,
                                              request.get("init_seed", 42), request.get("seed", 1))
    return result


def _driver_version():
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except Exception:  # noqa: BLE001
        return None


def _reference_cost(torch, problem, device, init_seed, seed):
    """FLOPs (where torch can count them) and the fewest bytes the reference must move."""
    from .tensors import generate_inputs

    torch.manual_seed(init_seed)
    init_inputs = problem.get_init_inputs()
    model = _construct(torch, problem.Model, init_inputs, init_seed, device)
    inputs = to_device(generate_inputs(problem, seed), device)
    cost = {"flops": None, "flops_note": ""}
    try:
        from torch.utils.flop_counter import FlopCounterMode

        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            outputs = as_output_list(model(*inputs))
        cost["flops"] = int(counter.get_total_flops())
        cost["flops_note"] = "torch.utils.flop_counter (matmul, convolution and attention only)"
    except ImportError:
        with torch.no_grad():
            outputs = as_output_list(model(*inputs))
        cost["flops_note"] = f"torch {torch.__version__} cannot count FLOPs"
    nbytes = lambda ts: sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor))
    params = list(model.parameters()) + list(model.buffers()) if hasattr(model, "parameters") else []
    cost["input_bytes"] = nbytes(inputs)
    cost["output_bytes"] = nbytes(outputs)
    cost["parameter_bytes"] = nbytes(params)
    cost["min_bytes"] = cost["input_bytes"] + cost["output_bytes"] + cost["parameter_bytes"]
    return cost


# ----------------------------------------------------------------------------------------------
# analyze (Stage 1)


def step_analyze(request):
    """Runs the reference Model once and reports its operations, FLOPs and minimum bytes
    (analyze.py says how each is counted), with the device name torch reports on cuda."""
    from . import analyze as analyze_mod
    from .tensors import generate_inputs

    device = request.get("device", "cpu")
    torch = _import_torch(device)
    problem = load_problem(request["problem"])
    program = getattr(problem, "KERNELPRO_PROGRAM", None)
    if program is not None:
        return _analyze_program(torch, request, problem, program, device)
    init_seed = request.get("init_seed", 42)
    torch.manual_seed(init_seed)
    try:
        init_inputs = problem.get_init_inputs()
        model = _construct(torch, problem.Model, init_inputs, init_seed, device)
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error", f"Model(*get_init_inputs()) failed: {type(e).__name__}: {e}")
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
            fallback_note = f"meta-tensor run failed ({type(e).__name__}); ran the reference for real"
    if result is None:
        try:
            result = analyze_mod.analyze(torch, problem, model, inputs, device)
        except StepError:
            raise
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"the reference forward failed: {type(e).__name__}: {e}")
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
        raise StepError("problem_error", f"get_init_inputs() failed: {type(e).__name__}: {e}")
    try:
        inputs = to_device(generate_inputs(problem, request.get("seed", 1)), device)
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")

    ref = None
    outputs = None  # the program's output tensors, from one real run
    executed_on = None
    if reference:
        try:
            model = _construct(torch, problem.Model, init_inputs, init_seed, device)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"the reference's Model(*get_init_inputs()) failed: "
                                             f"{type(e).__name__}: {e}")
        ref = _analyze_reference(torch, request, problem, model, inputs, device)
        executed_on = ref["executed_on"]
        shapes_from = ("the PyTorch reference on meta tensors" if executed_on == "meta"
                       else f"the PyTorch reference run on {executed_on}")
    elif device == "cuda" or kind in _PROGRAM_KINDS_RUNNABLE_ON_CPU:
        try:
            wrapper = _construct(torch, problem.BaselineModel, init_inputs, init_seed, device)
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
        result["flops_source"] = f"FLOPs counted on the PyTorch reference ({ref['flops_source']})"
    else:
        result["flops_source"] = NO_PROGRAM_FLOPS
    result["seconds"] = (ref or {}).get("seconds", 0.0)
    _add_device(torch, result, device)
    return result


# ----------------------------------------------------------------------------------------------
# reference
#
# The cache of one problem's reference (key: problem file, seeds, device, torch version, layout):
#
#   CACHE/references/<key>/meta.json        what step_reference returns, minus per-call fields
#   CACHE/references/<key>/expected/<trial>.kpt, expected64/<trial>.kpt   (check and extra trials)
#   CACHE/inputs/<key>/init_inputs.kpt, <trial>.kpt                        (inputs up to 1 MiB)
#
# Only the inputs tree is ever named to a candidate's process. meta.json records a manifest
# {relative path: sha256} per tree and a digest of both; a cache hit is used only when every file
# matches it, and the binary passes the manifests it got here to the steps that read the files.
#
# What is not stored, because it is cheaper to recompute than to keep (a 64 MiB input costs
# 64 MiB per trial, ten trials per problem and settings):
#   - a trial's inputs larger than STORE_INPUTS_UP_TO: `inputs_recipe` {problem, trials: {name:
#     {seed, variant, sha256}}} says how to regenerate them, and the digest is covered by
#     manifest_digest like the files;
#   - the timing trials' outputs: nothing compares against them (the referee verifies timed calls
#     by running the reference on the very inputs of each call).


def _reference_key(request, torch):
    device_name = torch.cuda.get_device_name(0) if request["device"] == "cuda" else "cpu"
    fields = {k: request.get(k) for k in ("device", "init_seed", "check_seeds", "extra_seeds",
                                          "timing_seeds", "fp64_trials")}
    # A program's REFERENCE gives the expected outputs: its content is part of the key too.
    reference = programs.reference_file(request["problem"])
    related = sha256_file(reference) if reference and os.path.isfile(reference) else ""
    return sha256_text(sha256_file(request["problem"]), related, json.dumps(fields, sort_keys=True),
                       device_name, torch.__version__, str(REFERENCE_LAYOUT))[:24]


def manifest_digest(reference_manifest, inputs_manifest, inputs_recipe=None):
    text = json.dumps({"inputs": inputs_manifest, "reference": reference_manifest,
                       "recipe": inputs_recipe or {}}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _tree_problem(root, manifest, ignore=()):
    """'' when the files under `root` are exactly `manifest` ({relative path: sha256}), else the
    first difference: 'expected/check_0.kpt: content hash differs'."""
    if not isinstance(manifest, dict) or not manifest:
        return "no manifest"
    for rel in sorted(manifest):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            return f"{rel}: missing"
        if sha256_file(path) != manifest[rel]:
            return f"{rel}: content hash differs"
    for folder, _, files in os.walk(root):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), root)
            if rel not in manifest and rel not in ignore:
                return f"{rel}: not in the manifest"
    return ""


def _cached_reference(ref_dir, inputs_dir, key):
    """(meta, '') for a cache that passes its content check, (None, reason) for one that does not,
    (None, '') when there is none."""
    meta_path = os.path.join(ref_dir, "meta.json")
    if not os.path.exists(ref_dir) and not os.path.exists(inputs_dir):
        return None, ""
    try:
        meta = read_json(meta_path)
    except (OSError, ValueError) as e:
        return None, f"meta.json: {type(e).__name__}"
    if not isinstance(meta, dict) or meta.get("layout") != REFERENCE_LAYOUT or meta.get("key") != key:
        return None, "meta.json: not this reference's"
    ref_manifest, inputs_manifest = meta.get("reference_manifest"), meta.get("inputs_manifest")
    recipe = meta.get("inputs_recipe")
    if not isinstance(ref_manifest, dict) or not isinstance(inputs_manifest, dict) or \
            not isinstance(recipe, dict) or \
            meta.get("manifest_digest") != manifest_digest(ref_manifest, inputs_manifest, recipe):
        return None, "meta.json: manifests do not match their digest"
    problem = _tree_problem(ref_dir, ref_manifest, ignore=("meta.json",))
    if not problem:
        problem = _tree_problem(inputs_dir, inputs_manifest)
        problem = problem and "inputs: " + problem
    return (None, problem) if problem else (meta, "")


def _spot_check(request, torch, meta, ref_dir):
    """'' when the first check trial of a cached reference is what the problem gives today: its
    init inputs and inputs are what get_init_inputs()/get_inputs() return for their seeds, and
    the reference's outputs on them match the cached ones (within atol/rtol). Else what differs.

    The content check alone trusts meta.json, which anything able to write the cache could have
    rewritten together with the files; this trial is recomputed, so no cache makes a wrong output
    pass it."""
    from . import tensors

    name = (meta.get("trials") or {}).get("check", [None])[0]
    if name is None or not request["check_seeds"]:
        return ""
    try:
        problem = load_problem(request["problem"])
        torch.manual_seed(request["init_seed"])
        init_inputs = list(problem.get_init_inputs())
        if plain.digest(init_inputs) != meta["inputs_manifest"].get("init_inputs" + EXT):
            return "init_inputs.kpt: differs from what get_init_inputs() returns"
        inputs = to_device(tensors.generate_inputs(problem, request["check_seeds"][0]), request["device"])
        recorded = meta["inputs_manifest"].get(name + EXT) or \
            ((meta["inputs_recipe"].get("trials") or {}).get(name) or {}).get("sha256")
        if plain.digest(inputs) != recorded:
            return f"inputs of {name}: differ from what get_inputs() returns for its seed"
        model = _construct(torch, problem.Model, init_inputs, request["init_seed"], request["device"])
        with torch.no_grad():
            outputs = as_output_list(model(*inputs))
        rel = f"expected/{name}{EXT}"
        expected = plain.load(os.path.join(ref_dir, rel), sha256=meta["reference_manifest"][rel])
    except Exception as e:  # noqa: BLE001 - whatever failed, recomputing says it properly
        return f"re-running trial {name} failed: {type(e).__name__}: {bounded(str(e), 300)}"
    if len(outputs) != len(expected):
        return f"{rel}: {len(expected)} outputs where the reference returns {len(outputs)}"
    for j, (o, e) in enumerate(zip(outputs, expected)):
        cmp = tensors.compare_output(o.cpu(), e, request["atol"], request["rtol"], index=j)
        if not cmp["passed"]:
            return f"{rel}: differs from a fresh run of the reference ({cmp['reason']})"
    return ""


def _touch(path):
    """Marks a cache entry used now (its modification time), for least-recently-used pruning."""
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only view of the cache: the entry just looks older


def _tensor_bytes(values):
    import torch

    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _install(tmp_dir, final_dir):
    """Moves a finished tree into place, replacing an old one (callers hold the key's lock)."""
    if os.path.exists(final_dir):
        old = f"{final_dir}.old{os.getpid()}"
        os.replace(final_dir, old)
        os.replace(tmp_dir, final_dir)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp_dir, final_dir)


def _nonfinite(tensors_list):
    """[(output index, description)] of outputs holding NaN or infinity."""
    from . import tensors

    found = []
    for j, t in enumerate(tensors_list):
        text = tensors.nonfinite_text(t)
        if text:
            found.append((j, text))
    return found


def step_reference(request):
    """Computes (or finds cached, checked) inputs and reference outputs for every trial."""
    device = request["device"]
    torch = _import_torch(device)

    key = _reference_key(request, torch)
    cache = request["cache_dir"]
    ref_dir = os.path.join(cache, "references", key)
    inputs_dir = os.path.join(cache, "inputs", key)
    os.makedirs(os.path.dirname(ref_dir), exist_ok=True)
    os.makedirs(os.path.dirname(inputs_dir), exist_ok=True)
    # One process computes or checks a key at a time; others wait and then find it cached.
    with open(ref_dir + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        notes = []
        if request.get("rebuild"):
            if os.path.exists(ref_dir) or os.path.exists(inputs_dir):
                notes.append(f"the cached reference at {ref_dir} was recomputed: a later step found "
                             "its files changed")
        else:
            meta, problem = _cached_reference(ref_dir, inputs_dir, key)
            if meta is not None:
                problem = _spot_check(request, torch, meta, ref_dir)
            if meta is not None and not problem:
                _touch(os.path.join(ref_dir, "meta.json"))  # last used: `kernelpro cache prune`
                # The key pins the problem's bytes, not its path: regenerate from this copy.
                meta["inputs_recipe"] = dict(meta["inputs_recipe"],
                                             problem=os.path.abspath(request["problem"]))
                meta.update(cached=True, reference_dir=ref_dir, inputs_dir=inputs_dir)
                return meta
            if problem:
                notes.append(f"the cached reference at {ref_dir} failed its content check "
                             f"({problem}); rebuilt")
        meta = _compute_reference(request, torch, key, ref_dir, inputs_dir)
    meta["notes"] = sorted(set(meta["notes"])) + notes
    meta.update(cached=False, reference_dir=ref_dir, inputs_dir=inputs_dir)
    return meta


def _compute_reference(request, torch, key, ref_dir, inputs_dir):
    from . import tensors

    device = request["device"]
    problem = load_problem(request["problem"])
    atol, rtol = request["atol"], request["rtol"]
    init_seed = request["init_seed"]
    ref_tmp = ref_dir + f".tmp{os.getpid()}"
    inputs_tmp = inputs_dir + f".tmp{os.getpid()}"
    for d in (ref_tmp, inputs_tmp):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    ref_manifest, inputs_manifest = {}, {}
    recipe = {"problem": os.path.abspath(request["problem"]), "trials": {}}
    store_limit = request.get("store_inputs_up_to", STORE_INPUTS_UP_TO)

    def save(tree, rel, value):
        if tree == "inputs":
            inputs_manifest[rel] = plain.save(os.path.join(inputs_tmp, rel), value)
        else:
            ref_manifest[rel] = plain.save(os.path.join(ref_tmp, rel), value)

    try:
        torch.manual_seed(init_seed)
        init_inputs = problem.get_init_inputs()
        try:
            save("inputs", "init_inputs" + EXT, list(init_inputs))
        except plain.PlainError as e:
            raise StepError("problem_error", f"get_init_inputs() returned something kernelpro cannot "
                            f"pass to a candidate: {e}")
        try:
            model = _construct(torch, problem.Model, init_inputs, init_seed, device)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"Model(*get_init_inputs()) failed: {type(e).__name__}: {e}")

        # Every forward call of the reference is traced: its aten operators are what the
        # torch-operator policy holds a candidate's against.
        trace = optrace.OpTrace()

        def run(inputs):
            with torch.no_grad(), trace:
                out = as_output_list(model(*inputs))
            _sync(torch, device)
            return out

        # A program with a REFERENCE: the program is the baseline, and before it is timed its own
        # outputs must match the reference's (docs/programs.md).
        baseline = None
        if getattr(problem, "BaselineModel", None) is not None and problem.BaselineModel is not problem.Model:
            try:
                baseline = _construct(torch, problem.BaselineModel, init_inputs, init_seed, device)
            except Exception as e:  # noqa: BLE001
                raise StepError("problem_error", f"the program (baseline) could not be constructed: "
                                f"{type(e).__name__}: {e}")
        baseline_checked = 0

        notes = []
        trials = {"check": [], "extra": [], "timing": []}
        metas = None
        fp32 = None
        fp64_model = None
        fp64_errors = []
        fp64_trials = []
        aliases = []
        vacuous = ""
        started = time.monotonic()
        for kind, seeds in (("check", request["check_seeds"]), ("extra", request["extra_seeds"]),
                            ("timing", request["timing_seeds"])):
            for i, seed in enumerate(seeds):
                name = f"{kind}_{i}"
                try:
                    base = tensors.generate_inputs(problem, seed)
                except Exception as e:  # noqa: BLE001
                    raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")
                inputs = to_device(base, device)
                variant = None
                if kind == "extra":
                    inputs, note, variant = _extra_inputs(torch, tensors, run, inputs, seed)
                    if inputs is None:
                        notes.append(note)
                        continue
                    if note:
                        notes.append(note)
                try:
                    outputs = run(inputs)
                except Exception as e:  # noqa: BLE001
                    raise StepError("problem_error", f"the reference forward failed: {type(e).__name__}: {e}")
                bad = _nonfinite(outputs)
                if bad:
                    raise StepError("problem_error", f"the reference's output {bad[0][0]} on trial {name} "
                                    f"has {bad[0][1]}; a reference must produce finite outputs")
                if metas is None:
                    metas = [_tensor_meta(t) for t in outputs]
                    fp32 = all(t.dtype == torch.float32 for t in outputs if t.is_floating_point()) and \
                        any(t.is_floating_point() for t in outputs)
                    aliases = [any(isinstance(x, torch.Tensor) and tensors.overlaps(o, x) for x in inputs)
                               for o in outputs]
                    again = run(inputs)
                    for a, b in zip(outputs, again):
                        cmp = tensors.compare_output(b, a, atol, rtol)
                        if not cmp["passed"]:
                            raise StepError("problem_error", "the reference is nondeterministic: two "
                                            "runs on the same inputs differ (" + cmp["reason"] + "). "
                                            "Dropout or batch norm in training mode, or random numbers "
                                            "inside forward, make every candidate unverifiable; make "
                                            "the reference deterministic (e.g. call .eval()).")
                        if not torch.equal(a, b):
                            notes.append("the reference is not bitwise deterministic (differences within tolerance)")
                if baseline is not None and kind == "check":
                    try:
                        with torch.no_grad():
                            got = as_output_list(baseline(*inputs))
                        _sync(torch, device)
                    except Exception as e:  # noqa: BLE001
                        raise StepError("problem_error", f"the program failed on trial {name}: "
                                        f"{type(e).__name__}: {e}")
                    if len(got) != len(outputs):
                        raise StepError("problem_error", f"the program returns {len(got)} outputs, its "
                                        f"REFERENCE {len(outputs)}")
                    for j, (a, b) in enumerate(zip(got, outputs)):
                        cmp = tensors.compare_output(a, b, atol, rtol)
                        if not cmp["passed"]:
                            raise StepError("problem_error", f"the program does not match its REFERENCE "
                                            f"on trial {name}, output {j}: {cmp['reason']}; fix the "
                                            "program or the reference before optimising against them")
                    del got
                    baseline_checked += 1
                try:
                    if _tensor_bytes(inputs) <= store_limit:
                        save("inputs", name + EXT, list(inputs))
                    else:
                        recipe["trials"][name] = {"seed": seed, "variant": variant,
                                                  "sha256": plain.digest(list(inputs))}
                    if kind != "timing":
                        save("reference", f"expected/{name}{EXT}", list(outputs))
                except plain.PlainError as e:
                    raise StepError("problem_error", f"trial {name}: {e}")
                trials[kind].append(name)
                if kind == "check" and not vacuous:
                    vacuous = tensors.vacuity(outputs, atol, rtol)
                if fp32 and kind == "check" and i < request.get("fp64_trials", 2):
                    try:
                        if fp64_model is None:
                            fp64_model = copy.deepcopy(model).double()
                        with torch.no_grad():
                            out64 = as_output_list(fp64_model(*tensors.to_double(inputs)))
                        if _nonfinite(out64):
                            notes.append(f"the fp64 reference is not finite on trial {name}; lowered "
                                         "precision is not checked on it")
                        else:
                            save("reference", f"expected64/{name}{EXT}", list(out64))
                            fp64_trials.append(name)
                            fp64_errors.append(max(tensors.relative_l2_error(o, r)
                                                   for o, r in zip(outputs, out64) if o.is_floating_point()))
                    except Exception as e:  # noqa: BLE001
                        notes.append(f"fp64 reference unavailable ({type(e).__name__}: {e}); "
                                     "lowered precision cannot be detected")
                        fp32 = False
                del outputs
        if baseline is not None:
            program = problem.KERNELPRO_PROGRAM
            notes.append(f"the program ({os.path.basename(program['path'])}, {program['kind']}) is the "
                         f"timing baseline; {os.path.basename(program['reference'])} gives the expected "
                         f"outputs, and the program matched them on {baseline_checked} check trials")
        if not trace.available:
            notes.append(f"torch {torch.__version__} has no TorchDispatchMode: the torch-operator "
                         "policy checks only how the candidate's source spells its calls")
        meta = {
            "status": "ok", "layout": REFERENCE_LAYOUT, "key": key, "trials": trials,
            "outputs": metas, "output_aliases_input": aliases, "fp32": bool(fp32),
            "fp64_trials": fp64_trials if fp32 else [],
            "reference_fp64_error": max(fp64_errors) if fp64_errors and fp32 else None,
            "vacuous": vacuous, "notes": sorted(set(notes)),
            "reference_ops": sorted(trace.ops),
            "seconds": time.monotonic() - started, "device": device,
            "reference_manifest": ref_manifest, "inputs_manifest": inputs_manifest,
            "inputs_recipe": recipe,
            "manifest_digest": manifest_digest(ref_manifest, inputs_manifest, recipe),
        }
        write_json(os.path.join(ref_tmp, "meta.json"), meta)
        _install(inputs_tmp, inputs_dir)
        _install(ref_tmp, ref_dir)
        return meta
    except BaseException:
        shutil.rmtree(ref_tmp, ignore_errors=True)
        shutil.rmtree(inputs_tmp, ignore_errors=True)
        raise


def _extra_inputs(torch, tensors, run, inputs, seed):
    """Signed, mixed-scale variants of the problem's inputs; falls back when the reference turns
    non-finite on them (e.g. log of negative numbers)."""
    for signs, scales, note in ((True, True, ""),
                                (False, True, "extra trials use positive mixed-scale inputs: the "
                                              "reference is not finite on signed inputs"),
                                (True, False, "extra trials use signed unit-scale inputs")):
        candidate = tensors.signed_mixed_scale(inputs, seed, signs=signs, scales=scales)
        try:
            if tensors.all_finite(run(candidate)):
                return candidate, note, {"signs": signs, "scales": scales}
        except Exception:  # noqa: BLE001 - the reference rejects these inputs; try the next kind
            pass
    return None, "extra trials skipped: the reference is not finite on perturbed inputs", None


# ----------------------------------------------------------------------------------------------
# build


def _build_cache(request):
    """The build cache of a candidate's process: its build scope, the precompiled headers the
    binary offers (`pch_dir`, `pch_manifest` from the pch step), `fast_build` (default true;
    false builds through ninja exactly as load_inline does) and `cutlass`, the CUTLASS tree
    ({"include_dir", "version"}) that sources including CUTLASS/CuTe build against."""
    from .buildcache import BuildCache
    from .fastbuild import PchOffer

    pch = PchOffer(request.get("pch_dir", ""), request.get("pch_manifest"))
    return BuildCache(request["build_root"], pch=pch, fast=request.get("fast_build", True),
                      device=request.get("device"), cutlass=request.get("cutlass"))


def step_build(request):
    torch = _import_torch(request["device"])
    cache = _build_cache(request)
    started = time.monotonic()
    try:
        _load_candidate(request, torch, [], cache)
    except StepError as e:
        # The failed extension's record carries the compiler diagnostics for the debug prompt.
        return {"status": e.status, "message": e.message, "extensions": cache.extensions,
                "seconds": time.monotonic() - started}
    return {"status": "ok", "message": "", "extensions": cache.extensions,
            "seconds": time.monotonic() - started}


# ----------------------------------------------------------------------------------------------
# check: run the candidate on every trial's inputs, save what it returns


class LoadedCandidate:
    """A candidate imported and constructed in this process, with what the harness bound before
    the import: the functions it calls, the patch guard and the operator trace."""

    def __init__(self, torch, device, module, model, cache, guard, trace, init_inputs):
        self.torch, self.device, self.module, self.model = torch, device, module, model
        self.cache, self.guard, self.trace, self.init_inputs = cache, guard, trace, init_inputs
        # Everything the harness calls is bound before the candidate can rebind anything.
        self.save, self.equal, self.clone = plain.save, torch.equal, torch.Tensor.clone
        self.calls = 0  # forward calls made through the harness


def load_candidate(request):
    """Imports and constructs the candidate for check and timing. Returns (LoadedCandidate, None)
    or (None, result dict of the failure)."""
    device = request["device"]
    torch = _import_torch(device)
    try:
        init_inputs = _read_input(request, "init_inputs")
    except StepError as e:
        return None, {"status": e.status, "message": e.message, "findings": []}
    trace = optrace.OpTrace()
    guard = []
    try:
        module, cache = _load_candidate(request, torch, guard)
    except StepError as e:
        return None, {"status": e.status, "message": e.message, "findings": []}
    try:
        model = _construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return None, {"status": status, "findings": [], "extensions": cache.extensions,
                      "message": "ModelNew(*get_init_inputs()) failed: " + message}
    return LoadedCandidate(torch, device, module, model, cache, guard[0], trace, init_inputs), None


def patch_findings(loaded, when):
    """'fail' findings for what the candidate rebound or tampered with so far."""
    findings = []
    patched = loaded.guard.changed()
    if patched:
        findings.append({"rule": "patching", "severity": "fail", "line": 0,
                         "message": "candidate rebound " + ", ".join(patched) + " " + when})
    if loaded.trace.tampered:
        findings.append({"rule": "trace_tampering", "severity": "fail", "line": 0,
                         "message": "forward removed kernelpro's operator trace while it ran "
                                    f"({loaded.trace.tampered})"})
    return findings


def step_check(request):
    """Runs the candidate on the trials' inputs and saves its outputs for step_compare.

    The request names the inputs tree (`inputs_dir`, checked against `inputs_manifest`) and
    carries the reference's metadata inline (`reference`: trials, outputs, output_aliases_input,
    reference_ops); the forward calls run under an operator trace for the torch-operator policy
    (`torch_ops_policy`, `allowed_ops`)."""
    loaded, failure = load_candidate(request)
    if failure is not None:
        return failure
    return run_check(loaded, request)


def run_check(loaded, request):
    """The check trials on a loaded candidate (step_check without the import)."""
    from . import tensors

    torch, device, model, trace = loaded.torch, loaded.device, loaded.model, loaded.trace
    save, equal, clone = loaded.save, loaded.equal, loaded.clone
    ref = request["reference"]
    out_dir = request["out_dir"]
    os.makedirs(out_dir, exist_ok=True)
    findings = []
    try:
        checks = ref["trials"]["check"]
        refill = _read_input(request, checks[1]) if len(checks) >= 2 else None
    except StepError as e:
        return {"status": e.status, "message": e.message, "findings": findings}
    result = {"status": "ok", "message": "", "findings": findings,
              "extensions": loaded.cache.extensions, "outputs": []}

    def call(inputs):
        tensors.poison_allocator(ref["outputs"], device)
        loaded.calls += 1
        with torch.no_grad():
            with trace:
                raw = model(*inputs)
            out = as_output_list(raw, strict=True)
        # What the caller's stream sees at return: that is the candidate's result.
        if device == "cuda":
            torch.cuda.current_stream().synchronize()
        snapshot = [clone(t).cpu() for t in out]
        _sync(torch, device)
        return out, snapshot

    kept_inputs = None
    try:
        for name in request["trials"]:
            inputs = to_device(_read_input(request, name), device)
            pristine = [clone(x) if isinstance(x, torch.Tensor) else x for x in inputs]
            out, snapshot = call(inputs)
            _check_side_effects(torch, tensors, name, inputs, pristine, out, snapshot, ref, findings, equal)
            _save_outputs(save, os.path.join(out_dir, name + EXT), snapshot)
            result["outputs"].append([name, name])
            if kept_inputs is None:
                kept_inputs = inputs
            del out
        # Same buffers, new values: a result cache keyed on the input tensors must not survive it.
        if kept_inputs is not None and refill is not None:
            for dst, src in zip(kept_inputs, refill):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src.to(dst.device))
            out, snapshot = call(kept_inputs)
            _save_outputs(save, os.path.join(out_dir, "refill" + EXT), snapshot)
            result["outputs"].append(["refill", checks[1]])
    except StepError as e:
        return dict(result, status=e.status, message=e.message)
    except Exception as e:  # noqa: BLE001 - the candidate failed while running
        status, message = _classify_runtime(e)
        return dict(result, status=status, message=message)
    findings.extend(patch_findings(loaded, "while running"))
    result["torch_ops"] = sorted(trace.ops)
    findings.extend(optrace.reference_op_findings(trace.ops, ref.get("reference_ops") or [],
                                          request.get("torch_ops_policy", "forbid"),
                                          request.get("allowed_ops", [])))
    return result


def _save_outputs(save, path, snapshot):
    try:
        save(path, snapshot)
    except plain.PlainError as e:
        raise StepError("incorrect", f"the output cannot be compared: {e}") from None


def _check_side_effects(torch, tensors, name, inputs, pristine, out, snapshot, ref, findings, equal):
    def fail(rule, message):
        if not any(f["rule"] == rule for f in findings):
            findings.append({"rule": rule, "severity": "fail", "message": message, "line": 0})

    for i, (x, p) in enumerate(zip(inputs, pristine)):
        if isinstance(x, torch.Tensor) and not equal(x, p):
            fail("input_mutation", f"candidate modified input {i} in place (trial {name})")
    for j, o in enumerate(out):
        if j < len(ref["output_aliases_input"]) and ref["output_aliases_input"][j]:
            continue
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor) and tensors.overlaps(o, x):
                fail("output_alias", f"output {j} aliases input {i} (trial {name}); the reference "
                     "returns new memory")
    for j, (o, s) in enumerate(zip(out, snapshot)):
        if not tensors.same_values(o.cpu(), s):
            fail("side_stream", f"output {j} changed after forward returned (trial {name}): work was "
                 "still running on another stream or thread")


# ----------------------------------------------------------------------------------------------
# compare: runs in a process that never imports the candidate


def compare_recorded(torch, actual, want, atol, rtol, vacuous, vacuous_rel_tol):
    """A recorded output set (what plain.load read) against the expected tensors: the row
    fields of its worst output (`passed`, `reason`, errors). Anything but a list of plain tensors,
    or a different number of outputs, fails. Where the problem is vacuous (an all-zero output
    would pass the tolerance), the relative L2 error is held to `vacuous_rel_tol` too."""
    from . import tensors

    if type(actual) is not list or not all(type(t) is torch.Tensor for t in actual):
        return {"passed": False, "reason": "the recorded output is not a list of tensors"}
    if len(actual) != len(want):
        return {"passed": False,
                "reason": f"{len(actual)} outputs where the reference returns {len(want)}"}
    worst = None
    for j, (a, e) in enumerate(zip(actual, want)):
        cmp = tensors.compare_output(a, e, atol, rtol, index=j)
        if vacuous and cmp["passed"] and a.is_floating_point():
            err = tensors.relative_l2_error(a, e)
            cmp["relative_l2_error"] = err
            if err > vacuous_rel_tol:
                cmp["passed"] = False
                cmp["reason"] = (f"relative error {err:.3g} exceeds {vacuous_rel_tol} "
                                 "(checked because the tolerance alone would accept an all-zero output)")
        if len(want) > 1 and cmp["reason"] and not cmp["reason"].startswith("output "):
            cmp["reason"] = f"output {j}: " + cmp["reason"]
        if worst is None or not cmp["passed"] or (cmp["max_abs_err"] or 0) > (worst["max_abs_err"] or 0):
            if worst is None or worst["passed"]:
                worst = cmp
    return worst


def step_compare(request):
    """Compares a candidate's recorded outputs with the reference's.

    `reference_dir` holds the expected outputs; `reference` (inline, from the binary's copy of the
    reference step's result) gives their manifest and the metadata the comparison needs. A
    candidate's output file is data it wrote: anything but plain tensors is an incorrect output."""
    import torch
    from . import tensors

    ref_dir = request["reference_dir"]
    ref = request["reference"]
    manifest = ref.get("reference_manifest") or {}
    atol, rtol = request["atol"], request["rtol"]

    def expected(folder, name, required=True):
        rel = f"{folder}/{name}{EXT}"
        if rel not in manifest:
            if not required:
                return None
            raise _reference_changed(f"the reference's {rel}", "not in the manifest")
        try:
            return plain.load(os.path.join(ref_dir, rel), sha256=manifest[rel])
        except (OSError, plain.PlainError) as e:
            raise _reference_changed(f"the reference's {rel}", e) from None

    rows = []
    first_failure = ""
    precision_failure = ""
    for actual_name, expected_name in request["pairs"]:
        path = os.path.join(request["actual_dir"], actual_name + EXT)
        label = actual_name.rpartition("/")[2]  # "check/check_1" -> "check_1"
        row = {"trial": label, "expected": expected_name, "passed": False}
        rows.append(row)
        want = expected("expected", expected_name)
        actual = None
        if not os.path.exists(path):
            row["reason"] = "no output was recorded"
        else:
            try:
                actual = plain.load(path)
            except (OSError, plain.PlainError) as e:
                row["reason"] = f"the recorded output is not plain tensors: {e}"
        if actual is not None:
            row.update(compare_recorded(torch, actual, want, atol, rtol, ref["vacuous"],
                                        request["vacuous_rel_tol"]))
        out64 = None
        if row["passed"] and ref["fp32"] and request["precision_policy"] != "off":
            out64 = expected("expected64", expected_name, required=False)
        if out64 is not None:
            err = max(tensors.relative_l2_error(a, e) for a, e in zip(actual, out64) if a.is_floating_point())
            fp64_error = ref.get("reference_fp64_error") or 0.0
            bound = max(request["precision_factor"] * fp64_error, request["precision_bound"])
            row["fp64_relative_error"] = err
            row["fp64_bound"] = bound
            if not err <= bound:  # NaN fails too
                precision_failure = precision_failure or (
                    f"lowered precision: relative error against an fp64 reference is {err:.3g}, "
                    f"above the {bound:.3g} that fp32 arithmetic stays within (the fp32 reference "
                    f"itself: {fp64_error:.3g}); TF32 or half-precision math in an fp32 problem")
        if not row["passed"] and not first_failure:
            first_failure = f"trial {label}: {row.get('reason', 'mismatch')}"
    blocking_precision = precision_failure if request["precision_policy"] == "fail" else ""
    passed = not first_failure and not blocking_precision
    message = "; ".join(m for m in (blocking_precision, first_failure) if m)
    return {"passed": passed, "message": message, "precision_warning": precision_failure,
            "trials": rows}


# ----------------------------------------------------------------------------------------------
# run: the target process a profiler attaches to; trace: a PyTorch profiler timeline


NVTX_RANGE = "kernelpro"  # profilers select the candidate's forward by this range


def _model_and_inputs(request, torch):
    """The candidate's (or, without one, the reference's) model and the first check inputs."""
    device = request["device"]
    init_inputs = _read_input(request, "init_inputs")
    inputs = to_device(_read_input(request, request["reference"]["trials"]["check"][0]), device)
    if request.get("candidate"):
        module, _ = _load_candidate(request, torch, [])
        model = _construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
    else:
        # Without a candidate: the baseline the candidates race (a program's own kernels).
        model = _construct(torch, programs.baseline_class(load_problem(request["problem"])),
                           init_inputs, request["init_seed"], device)
    return model, inputs


def _profiled_calls(request, torch, model, inputs):
    """Warm-up calls outside the NVTX range, then `iterations` calls inside it: a profiler
    filtering on the range sees the forward's own kernels, not input generation or warm-up."""
    device = request["device"]
    cuda = device == "cuda"
    with torch.no_grad():
        for _ in range(request.get("warmup", 2)):
            model(*inputs)
        _sync(torch, device)
        for _ in range(request.get("iterations", 1)):
            if cuda:
                torch.cuda.nvtx.range_push(NVTX_RANGE)
            # The same name marks the call in a torch.profiler trace (a user_annotation range).
            with torch.profiler.record_function(NVTX_RANGE):
                model(*inputs)
                _sync(torch, device)
            if cuda:
                torch.cuda.nvtx.range_pop()


def step_run(request):
    torch = _import_torch(request["device"])
    try:
        model, inputs = _model_and_inputs(request, torch)
        _profiled_calls(request, torch, model, inputs)
    except StepError as e:
        return {"status": e.status, "message": e.message}
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return {"status": status, "message": message}
    return {"status": "ok", "message": "", "iterations": request.get("iterations", 1)}


def step_trace(request):
    """Records one forward call with torch.profiler (CPU and CUDA activities) as a Chrome trace."""
    device = request["device"]
    torch = _import_torch(device)
    from torch.profiler import ProfilerActivity, profile

    try:
        model, inputs = _model_and_inputs(request, torch)
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
        _profiled_calls(dict(request, iterations=0), torch, model, inputs)  # warm-up only
        # The profiler's own first step pays for starting CUPTI (milliseconds of host time before
        # the first launch): one discarded profiler warm-up step, then the recorded calls.
        iterations = request.get("iterations", 1)
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=iterations, repeat=1)
        with profile(activities=activities, schedule=schedule) as prof:
            for _ in range(1 + iterations):
                _profiled_calls(dict(request, warmup=0, iterations=1), torch, model, inputs)
                prof.step()
        prof.export_chrome_trace(request["trace_path"])
    except StepError as e:
        return {"status": e.status, "message": e.message}
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return {"status": status, "message": message}
    return {"status": "ok", "message": "", "trace_path": request["trace_path"]}


def step_pch(request):
    from .pch import step_pch as run

    return run(request)


def step_energy(request):
    from .energy import step_energy as run

    return run(request)


def step_timing_selftest(request):
    from .selftest import step_timing_selftest as run

    return run(request)


STEPS = {
    "scan": step_scan,
    "pch": step_pch,
    "inspect": step_inspect,
    "analyze": step_analyze,
    "reference": step_reference,
    "build": step_build,
    "check": step_check,
    "compare": step_compare,
    "run": step_run,
    "trace": step_trace,
    "energy": step_energy,
    "timing_selftest": step_timing_selftest,
}
