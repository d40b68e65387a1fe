"""`kernelpro doctor --timing`: can kernelpro's timings be trusted on this GPU?

Two checks, on whatever GPU the process sees, in about a minute, with the timer every evaluation
uses (timing.Timer):

  span  short torch calls of one and of three kernels, 2^10 to 2^24 elements: the timer's median
        per-call time against an independent reading of the same calls (`plain_spans`: one
        profiler session over a plain loop, the same CUPTI instrumentation, none of the timer's
        markers, private stream or attribution), the L2 flushed and the device idle before each
        call, as the timer has it. Pass: within max(1 us, 3 %).
  self  a reference against itself: two timers of one model (each with its own input buffers,
        as the referee and a candidate's process have) in blocks of 10 calls, alternating
        (A B B A ...) with idle pauses between blocks as between the referee's and a candidate's
        turns, 10 rounds; the ratio of their medians. Pass: within 1 % of 1.00.

Clocks are read (never set) before and after. The step returns every number; the binary renders
them (src/cli/timing_selftest.h).
"""

import statistics
import time

from .timing import Timer, clock_reader

ABS_TOL_US = 1.0
REL_TOL = 0.03
SELF_TOL = 0.01


def plain_spans(torch, call, flush, calls, kernels):
    """Per call: the span (us) of its kernels read from one profiler session over a plain loop
    (the L2 flush, a device synchronisation, the call, another), under the same instrumentation
    as the timer (CUDA activity only) but without its markers, stream or attribution: each call
    is the `kernels` records that follow a flush in launch order. None when the records do not
    come in groups of 1 + kernels."""
    activities = [torch.profiler.ProfilerActivity.CUDA]
    cuda = torch.autograd.DeviceType.CUDA
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(calls):
            flush.zero_()
            torch.cuda.synchronize()
            call()
            torch.cuda.synchronize()
    records = sorted((e.correlation_id(), e.start_ns(), e.end_ns())
                     for e in prof.profiler.kineto_results.events()
                     if e.device_type() == cuda and not e.is_user_annotation())
    group = 1 + kernels
    if len(records) != calls * group:
        return None
    spans = []
    for i in range(0, len(records), group):
        work = records[i + 1:i + group]
        spans.append((max(e[2] for e in work) - min(e[1] for e in work)) / 1e3)
    return spans


def _model(torch, fn):
    class Model(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    return Model()


def _one_kernel(x):
    return x.relu()


def _three_kernels(x):
    return (x * 2.0).add(1.0).relu()


def _swish(x):
    return x * x.sigmoid()


SPAN_CASES = [("relu", _one_kernel, 1, e) for e in (10, 14, 18, 20, 22, 24)]
SPAN_CASES += [("2x+1, relu", _three_kernels, 3, e) for e in (10, 22)]
SELF_CASES = [("relu", _one_kernel, 22), ("swish", _swish, 24)]


def _span_check(torch, name, fn, kernels, exp, calls):
    x = torch.randn(1 << exp, device="cuda")
    timer = Timer(torch, "cuda", _model(torch, fn), [[x.clone()], [x.clone()]])
    timer.warm_up(0.1, 3)
    times = []
    for _ in range(3):
        times += timer.block(calls)["times_ms"]
    ours = statistics.median(times) * 1e3
    with torch.no_grad():
        spans = plain_spans(torch, lambda: fn(x), timer.flush, calls, kernels)
    if spans is None:
        return {"check": "span", "case": f"{name} 2^{exp}", "kernels": kernels, "timer_us": ours,
                "profiler_us": None, "passed": False, "method": timer.method,
                "note": "the profiler's records of the plain loop did not come in groups of "
                        f"{1 + kernels}"}
    reading = statistics.median(spans)
    diff = ours - reading
    return {"check": "span", "case": f"{name} 2^{exp}", "kernels": kernels, "timer_us": ours,
            "profiler_us": reading, "diff_us": diff,
            "passed": abs(diff) <= max(ABS_TOL_US, REL_TOL * reading), "method": timer.method}


def _self_check(torch, name, fn, exp, rounds, pause_s):
    x = torch.randn(1 << exp, device="cuda")
    sets = [[x.clone()], [x.clone()]]
    a = Timer(torch, "cuda", _model(torch, fn), sets)
    b = Timer(torch, "cuda", _model(torch, fn), sets)
    a.warm_up(0.3, 3)
    b.warm_up(0.1, 3)
    blocks = {id(a): [], id(b): []}
    clocks = []
    for r in range(rounds):
        for t in ((a, b) if r % 2 == 0 else (b, a)):
            block = t.block(10)
            blocks[id(t)].append(statistics.median(block["times_ms"]))
            clocks += block["sm_mhz"]
            time.sleep(pause_s)
    ratio = statistics.median(blocks[id(a)]) / statistics.median(blocks[id(b)])
    return {"check": "self", "case": f"{name} 2^{exp}", "median_us":
            statistics.median(blocks[id(a)] + blocks[id(b)]) * 1e3, "ratio": ratio,
            "passed": abs(ratio - 1.0) <= SELF_TOL, "sm_mhz": [min(clocks), max(clocks)]
            if clocks else None}


def step_timing_selftest(request):
    from .loading import import_torch

    torch = import_torch("cuda")
    calls = int(request.get("calls", 30))
    started = time.perf_counter()
    checks = [_span_check(torch, *case, calls) for case in SPAN_CASES]
    checks += [_self_check(torch, *case, int(request.get("rounds", 10)),
                           float(request.get("pause_s", 0.003))) for case in SELF_CASES]
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"status": "ok", "message": "", "device": torch.cuda.get_device_name(),
            "capability": f"sm_{props.major}{props.minor}", "torch": torch.__version__,
            "method": checks[0]["method"], "clock_note": clock_reader().note,
            "checks": checks, "passed": all(c["passed"] for c in checks),
            "seconds": time.perf_counter() - started}
