"""The `inspect` step: the interpreter, torch and the device as the binary needs to know them
(include and library paths for builds, the GPU's properties), and with a problem the reference's
FLOPs and the fewest bytes it must move."""

import os
import sys

from .common import as_output_list, to_device
from .loading import construct, import_torch, load_problem


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
        import_torch("cuda")
        p = torch.cuda.get_device_properties(0)
        info.update(gpu_name=p.name, compute_capability=[p.major, p.minor],
                    sm_count=p.multi_processor_count, memory_bytes=p.total_memory,
                    l2_bytes=getattr(p, "L2_cache_size", None),
                    device_count=torch.cuda.device_count(), driver=_driver_version())
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
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                              "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except Exception:  # noqa: BLE001
        return None


def _reference_cost(torch, problem, device, init_seed, seed):
    """FLOPs (where torch can count them) and the fewest bytes the reference must move."""
    from .tensors import generate_inputs

    torch.manual_seed(init_seed)
    init_inputs = problem.get_init_inputs()
    model = construct(torch, problem.Model, init_inputs, init_seed, device)
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

    def nbytes(ts):
        return sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor))

    params = (list(model.parameters()) + list(model.buffers())
              if hasattr(model, "parameters") else [])
    cost["input_bytes"] = nbytes(inputs)
    cost["output_bytes"] = nbytes(outputs)
    cost["parameter_bytes"] = nbytes(params)
    cost["min_bytes"] = cost["input_bytes"] + cost["output_bytes"] + cost["parameter_bytes"]
    return cost
