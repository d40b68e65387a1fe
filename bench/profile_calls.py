#!/usr/bin/env python3
"""Per-call GPU time of a candidate from the CUDA profiler, in a plain Python process.

The reference point of bench/short_kernel_timing.py: runs the candidate's forward on each
problem's inputs the way kernelpro's timer does (inputs refilled with new values and the L2
flushed before every call, the device synchronised before the call and after it), records `--calls` calls with
torch.profiler (CPU and CUDA activity; each call inside a record_function range) and reports, per
call, the span from its first kernel's start to its last kernel's end (launch gaps inside the call
count) and the plain sum of its kernels' durations. Memory copies and sets the call makes count as
kernels.

`--gate-us N` queues each call's launches behind a spin kernel of about N us on the call's stream
(torch.cuda._sleep, launched before the call's range so it is not the call's work): the call's
kernels then run back to back, and the span holds no host launch gap (an independent gated
reading for kernelpro's gated timer); `gate_held` counts the calls whose launches all returned
before the spin ended. `--class Model` profiles a problem's own Model (the reference) instead of
the candidate's ModelNew.

`--prebuilt PATH` loads an extension kernelpro already built (its build.shared_objects) for a
load_inline call of the same name, so the profiled binary is the timed one and nothing compiles
again; other load_inline calls build as usual (TORCH_EXTENSIONS_DIR).

    profile_calls.py --candidate C.py --problem P1.py [P2.py ...] --json-out F.json
                     [--calls 100] [--gate-us 0] [--class ModelNew] [--prebuilt X.so ...]
"""

import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
import time
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

sys.path.insert(0, os.path.join(benchlib.ROOT, "python"))

ANNOTATION = "kp_bench_call"
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver")


def _t(value):
    """A trace timestamp as an exact decimal (µs since some epoch: a float would lose the
    sub-microsecond digits of an absolute time)."""
    return value if isinstance(value, Decimal) else Decimal(str(value))


def call_spans(trace, annotation=ANNOTATION):
    """Per call (a host-side record_function range named `annotation`, in time order): the GPU work
    launched inside it, found through the launch's correlation id. Returns one dict per call:
    span_us (first start to last end), sum_us (sum of durations), kernels (count); span_us and
    sum_us are None for a call that launched no GPU work."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    calls, launches, work = [], [], {}
    for e in events:
        cat = str(e.get("cat", "")).lower()
        args = e.get("args") or {}
        # The host-side range; kineto also draws it on the GPU's row as gpu_user_annotation.
        if e.get("name") == annotation and not cat.startswith("gpu") and e.get("ph", "X") == "X":
            calls.append(e)
        elif cat in RUNTIME_CATEGORIES and "correlation" in args:
            launches.append(e)
        elif cat in GPU_CATEGORIES and "correlation" in args:
            work.setdefault(args["correlation"], []).append(e)
    calls.sort(key=lambda e: _t(e["ts"]))
    out = []
    for call in calls:
        begin = _t(call["ts"])
        end = begin + _t(call.get("dur", 0))
        ids = {e["args"]["correlation"] for e in launches if begin <= _t(e["ts"]) <= end}
        kernels = [k for i in ids for k in work.get(i, [])]
        if not kernels:
            out.append({"span_us": None, "sum_us": None, "kernels": 0})
            continue
        first = min(_t(k["ts"]) for k in kernels)
        last = max(_t(k["ts"]) + _t(k.get("dur", 0)) for k in kernels)
        total = sum(_t(k.get("dur", 0)) for k in kernels)
        out.append({"span_us": float(last - first), "sum_us": float(total),
                    "kernels": len(kernels)})
    return out


def summarize_calls(spans):
    """Medians over the calls that launched GPU work."""
    timed = [s for s in spans if s["span_us"] is not None]
    return {"calls": len(spans), "calls_with_gpu_work": len(timed),
            "span_us": benchlib.median([s["span_us"] for s in timed]),
            "sum_us": benchlib.median([s["sum_us"] for s in timed]),
            "kernels_per_call": benchlib.median([s["kernels"] for s in timed])}


def _load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install_prebuilt(paths):
    """Routes load_inline(name=N) to the shared object N.so among `paths`, when there is one."""
    from torch.utils import cpp_extension
    prebuilt = {os.path.splitext(os.path.basename(p))[0]: p for p in paths}
    real = cpp_extension.load_inline
    used = []

    def load_inline(*args, **kwargs):
        name = kwargs.get("name", args[0] if args else None)
        path = prebuilt.get(name)
        if path and os.path.exists(path):
            loader = importlib.machinery.ExtensionFileLoader(name, path)
            spec = importlib.util.spec_from_file_location(name, path, loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            sys.modules[name] = module
            used.append(path)
            return module
        return real(*args, **kwargs)

    cpp_extension.load_inline = load_inline
    return used


def profile_problem(torch, candidate_module, problem_path, calls, warmup_s, gate_us=0.0,
                    cls="ModelNew"):
    problem = _load_module("kp_bench_problem", problem_path)
    device = "cuda"
    init = [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_init_inputs()]
    model = getattr(candidate_module, cls)(*init).to(device)
    gate_cycles = int(gate_us * 1980)  # SM cycles at Hopper's boost clock; longer at lower clocks
    held = []
    base = [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
    buffers = [x.clone() if isinstance(x, torch.Tensor) else x for x in base]
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (128 << 20)
    flush = torch.empty(2 * l2, dtype=torch.int8, device=device)  # as kernelpro's timer

    def one_call():
        for dst, src in zip(buffers, base):  # new values in the same buffers, as kernelpro
            if isinstance(dst, torch.Tensor) and dst.is_floating_point():
                torch.mul(src, torch.rand_like(src) * 0.5 + 0.5, out=dst)
        flush.zero_()
        torch.cuda.synchronize()  # the device idle when the call starts, as kernelpro's
        released = None
        if gate_cycles:
            torch.cuda._sleep(gate_cycles)
            released = torch.cuda.Event()
            released.record()
        with torch.profiler.record_function(ANNOTATION):
            out = model(*buffers)
        if released is not None:
            held.append(not released.query())
        torch.cuda.synchronize()
        return out

    with torch.no_grad():
        start, n = time.perf_counter(), 0
        while n < 10 or time.perf_counter() - start < warmup_s:
            one_call()
            n += 1
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as prof:
            held.clear()
            for _ in range(calls):
                one_call()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f, parse_float=Decimal)
    spans = call_spans(trace)
    return {"problem": problem_path, "warmup_calls": n, "gate_us": gate_us,
            "gate_held": sum(held) if gate_cycles else None,
            **summarize_calls(spans), "per_call": spans}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--problem", nargs="+", required=True)
    parser.add_argument("--json-out", required=True)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--warmup-s", type=float, default=0.5)
    parser.add_argument("--gate-us", type=float, default=0.0)
    parser.add_argument("--class", dest="cls", default="ModelNew")
    parser.add_argument("--prebuilt", nargs="*", default=[])
    a = parser.parse_args()
    import torch
    used = install_prebuilt(a.prebuilt)
    candidate = _load_module("kp_bench_candidate", a.candidate)
    rows = [profile_problem(torch, candidate, p, a.calls, a.warmup_s, a.gate_us, a.cls)
            for p in a.problem]
    benchlib.write_json(a.json_out, {"candidate": a.candidate, "prebuilt_used": used,
                                     "torch": torch.__version__, "rows": rows})


if __name__ == "__main__":
    main()
