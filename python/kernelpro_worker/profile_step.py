"""The `run` and `trace` steps: the candidate's forward (or, without a candidate, the baseline's)
called inside an NVTX range named NVTX_RANGE, in the target process a profiler (ncu, nsys)
attaches to, or recorded with torch.profiler as a Chrome trace."""

from . import programs
from .candidate import import_candidate
from .common import StepError, to_device
from .loading import classify_runtime, construct, import_torch, load_problem, read_input, sync


NVTX_RANGE = "kernelpro"  # profilers select the candidate's forward by this range


def _model_and_inputs(request, torch):
    """The candidate's (or, without one, the reference's) model and the first check inputs."""
    device = request["device"]
    init_inputs = read_input(request, "init_inputs")
    inputs = to_device(read_input(request, request["reference"]["trials"]["check"][0]), device)
    if request.get("candidate"):
        module, _ = import_candidate(request, torch, [])
        model = construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
    else:
        # Without a candidate: the baseline the candidates race (a program's own kernels).
        model = construct(torch, programs.baseline_class(load_problem(request["problem"])),
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
        sync(torch, device)
        for _ in range(request.get("iterations", 1)):
            if cuda:
                torch.cuda.nvtx.range_push(NVTX_RANGE)
            # The same name marks the call in a torch.profiler trace (a user_annotation range).
            with torch.profiler.record_function(NVTX_RANGE):
                model(*inputs)
                sync(torch, device)
            if cuda:
                torch.cuda.nvtx.range_pop()


def step_run(request):
    torch = import_torch(request["device"])
    try:
        model, inputs = _model_and_inputs(request, torch)
        _profiled_calls(request, torch, model, inputs)
    except StepError as e:
        return {"status": e.status, "message": e.message}
    except Exception as e:  # noqa: BLE001
        status, message = classify_runtime(e)
        return {"status": status, "message": message}
    return {"status": "ok", "message": "", "iterations": request.get("iterations", 1)}


def step_trace(request):
    """Records one forward call with torch.profiler (CPU and CUDA activities) as a Chrome trace."""
    device = request["device"]
    torch = import_torch(device)
    from torch.profiler import ProfilerActivity, profile

    try:
        model, inputs = _model_and_inputs(request, torch)
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda"
                                               else [])
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
        status, message = classify_runtime(e)
        return {"status": status, "message": message}
    return {"status": "ok", "message": "", "trace_path": request["trace_path"]}
