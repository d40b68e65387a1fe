"""`kernelpro doctor --timing`: can kernelpro's timings be trusted on this GPU?

Two checks, on whatever GPU the process sees, in about a minute, with the timer every evaluation
uses (timing.Timer):

  span  short torch calls of one and of three kernels, 2^10 to 2^24 elements, timed by the timer
        in 3 blocks (gated: gate.py), each call's time read two more ways:
        - the same calls' device records read without the timer's markers, attribution or gate
          reading (`regroup`: the next `kernels` records off the harness's stream, spin kernels
          left out): the timer's median against theirs, which checks that every call gets its
          own work and nothing else;
        - a plain loop's (`plain_loop`: one profiler session over flush, synchronize, gate, call,
          synchronize, with none of the timer's preparation): its gated span against the
          timer's, which checks the gate and the harness's preparation leave the call's time as
          an independent gated reading has it, and its kernels' summed durations against the
          timer's calls'.
        Pass: within max(0.5 us, 3 %) and every timed call held by the gate. For one kernel the
        span is the device work. Shown, not judged: the plain loop's ungated span, which holds
        the host's launch gaps between kernels launched one by one from Python.
  self  a reference against itself: two timers of one model (each with its own input buffers,
        as the referee and a candidate's process have) in blocks of 10 calls, alternating
        (A B B A ...) with idle pauses between blocks as between the referee's and a candidate's
        turns, 20 rounds; the ratio of their medians. Pass: within 1 % of 1.00.

Clocks are read (never set) before and after. The step returns every number; the binary renders
them (src/cli/timing_selftest.h).
"""

import statistics
import time

from .gate import is_gate
from .timing import Timer, clock_reader

ABS_TOL_US = 0.5         # a span against an independent gated reading
DEVICE_ABS_TOL_US = 1.0  # summed kernel durations against a plain loop's
REL_TOL = 0.03
SELF_TOL = 0.01


def _per_call(records, kernels):
    """(span_us, busy_us) of each call from (correlation, start_ns, end_ns) records taken
    `kernels` at a time in launch order; None when they do not divide evenly."""
    records = sorted(records)
    if not records or len(records) % kernels:
        return None
    out = []
    for i in range(0, len(records), kernels):
        work = records[i:i + kernels]
        out.append(((max(e[2] for e in work) - min(e[1] for e in work)) / 1e3,
                    sum(e[2] - e[1] for e in work) / 1e3))
    return out


def regroup(records, harness_stream, kernels):
    """The timer's block records (timing.Timer.last_records) read without its markers: the
    records off the harness's stream, `kernels` per call in launch order."""
    return _per_call([(e["correlation"], e["start_ns"], e["end_ns"]) for e in records
                      if e["stream"] != harness_stream and not is_gate(e)], kernels)


def plain_loop(torch, call, flush, calls, kernels, gate_cycles=0):
    """(span_us, busy_us) per call from one profiler session over a plain loop (the L2 flush on
    the call's stream, a device synchronisation, with `gate_cycles` a spin of that many cycles on
    the call's stream, the call, another synchronisation): each call is the `kernels` records
    after its flush's (and its spin's). None when the records do not come in such groups."""
    cuda = torch.autograd.DeviceType.CUDA
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            flush.zero_()
            torch.cuda.synchronize()
            if gate_cycles:
                torch.cuda._sleep(gate_cycles)
            call()
            torch.cuda.synchronize()
    records = sorted((e.correlation_id(), e.start_ns(), e.end_ns())
                     for e in prof.profiler.kineto_results.events()
                     if e.device_type() == cuda and not e.is_user_annotation())
    skip = 2 if gate_cycles else 1
    group = skip + kernels
    if len(records) != calls * group:
        return None
    return _per_call([r for i, r in enumerate(records) if i % group >= skip], kernels)


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


def _within(a, b, abs_us=ABS_TOL_US):
    return abs(a - b) <= max(abs_us, REL_TOL * b)


def _span_check(torch, name, fn, kernels, exp, calls):
    x = torch.randn(1 << exp, device="cuda")
    timer = Timer(torch, "cuda", _model(torch, fn), [[x.clone()], [x.clone()]])
    timer.warm_up(0.1, 3)
    row = {"check": "span", "case": f"{name} 2^{exp}", "kernels": kernels, "method": timer.method}
    times, same, held, gate_us = [], [], True, None
    for _ in range(3):
        block = timer.block(calls)
        times += block["times_ms"]
        held = held and bool(block.get("gate_held"))
        gate_us = block.get("gate_us") or gate_us
        read = (regroup(timer.last_records, timer.tracer.stream_id, kernels)
                if timer.tracer is not None else None)
        same = None if read is None or same is None else same + read
    row["timer_us"] = statistics.median(times) * 1e3
    row["gate_held"], row["gate_us"] = held, gate_us
    if not held:
        row["gate_note"] = timer.gate.note if timer.gate is not None else timer.gate_note
    with torch.no_grad():
        plain = plain_loop(torch, lambda: fn(x), timer.flush, calls, kernels)
        gated = (plain_loop(torch, lambda: fn(x), timer.flush, calls, kernels,
                            timer.gate.cycles()) if timer.gate is not None else None)
    if plain:
        row["plain_us"] = statistics.median(p[0] for p in plain)
        row["plain_device_us"] = statistics.median(p[1] for p in plain)
    if gated:
        row["plain_gated_us"] = statistics.median(p[0] for p in gated)
    if not same or not plain or not gated:
        row.update(profiler_us=None, passed=False,
                   note=timer.tracer_note if timer.tracer is None else
                   f"the profiler's records did not come in groups of {kernels}"
                   if not same else "the plain loop's records did not come in groups of "
                   f"{1 + kernels}" if not plain else
                   "no gated plain loop: " + (timer.gate_note or "its records did not group"))
        return row
    row["profiler_us"] = statistics.median(s[0] for s in same)
    row["device_us"] = statistics.median(s[1] for s in same)
    row["diff_us"] = row["timer_us"] - row["profiler_us"]
    row["passed"] = (held and _within(row["timer_us"], row["profiler_us"])
                     and _within(row["timer_us"], row["plain_gated_us"])
                     and _within(row["device_us"], row["plain_device_us"], DEVICE_ABS_TOL_US))
    return row


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


NEEDS_A_GPU = ("doctor --timing checks the GPU's timing and needs a CUDA GPU with a CUDA build "
               "of torch ({why}); on this machine `kernelpro doctor` checks the rest, and CPU "
               "evaluations (`kernelpro eval --device cpu`) need no timing check")


def step_timing_selftest(request):
    from .common import StepError
    from .loading import import_torch

    try:
        torch = import_torch("cuda")
    except StepError as e:
        # import_torch's own advice (--device cpu) is an option doctor does not take.
        why = e.message.split(";")[0]
        return {"status": "unavailable", "message": NEEDS_A_GPU.format(why=why)}
    calls = int(request.get("calls", 30))
    started = time.perf_counter()
    checks = [_span_check(torch, *case, calls) for case in SPAN_CASES]
    checks += [_self_check(torch, *case, int(request.get("rounds", 20)),
                           float(request.get("pause_s", 0.003))) for case in SELF_CASES]
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"status": "ok", "message": "", "device": torch.cuda.get_device_name(),
            "capability": f"sm_{props.major}{props.minor}", "torch": torch.__version__,
            "method": checks[0]["method"], "clock_note": clock_reader().note,
            "checks": checks, "passed": all(c["passed"] for c in checks),
            "seconds": time.perf_counter() - started}
