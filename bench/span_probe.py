#!/usr/bin/env python3
"""The timer's span method against the profiler, in one process, on a CUDA GPU.

For one-kernel and three-kernel torch calls of 2^10..2^27 elements, prints the timer's per-call
median (python/kernelpro_worker/timing.py: the span of the call's device work from CUPTI records)
beside an independent reading of the same calls (torch.profiler over plain back-to-back calls,
synchronised after each: first kernel start to last kernel end), the host-inclusive time and
the event fallback; then the reference against itself (two timers of one model, blocks
alternating with idle pauses), the SM clock per block, and what a block costs on the host.
Writes JSON; asserts nothing.

    bench/span_probe.py [--json-out F] [--calls 20] [--blocks 10]
"""

import argparse
import json
import os
import statistics
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def model_of(torch, fn):
    class Model(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)

    return Model()


def relu_affine_three(x):
    return ((x * 1.5).relu() + 0.25)


def relu_affine_one(x):
    return x.relu()


def profiler_span(torch, fn, args, calls, kernels):
    """Median over `calls` plain calls (synchronised after each) of first-kernel-start to
    last-kernel-end, read from torch.profiler's kernel records."""
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(*args)
            torch.cuda.synchronize()
    cuda = torch.autograd.DeviceType.CUDA
    ks = sorted((e.start_ns(), e.end_ns()) for e in prof.profiler.kineto_results.events()
                if e.device_type() == cuda and not e.is_user_annotation())
    spans, sums = [], []
    for i in range(0, len(ks) - kernels + 1, kernels):
        chunk = ks[i:i + kernels]
        spans.append((chunk[-1][1] - chunk[0][0]) / 1e3)
        sums.append(sum(b - a for a, b in chunk) / 1e3)
    return statistics.median(spans), statistics.median(sums), len(ks)


def launch_us(torch, way, calls=200):
    """Median host time (us) of `x.relu()` on 2^10 floats, each call after a device
    synchronisation: "plain" (synchronize), "poll" (an event polled instead), "flush+sync" and
    "flush+poll" (a 120 MB write before, as the timer's L2 flush), "profiled" (inside a CUDA
    profiler window, as the timer's blocks)."""
    x = torch.randn(1 << 10, device="cuda")
    flush = torch.empty(120 << 20, dtype=torch.int8, device="cuda")
    times = []

    def run():
        for _ in range(calls):
            if "flush" in way:
                flush.zero_()
            if "poll" in way:
                e = torch.cuda.Event()
                e.record()
                while not e.query():
                    pass
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            x.relu()
            times.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()

    if way == "profiled":
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            run()
    else:
        run()
    return round(statistics.median(times), 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json-out", default="")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=10)
    a = ap.parse_args()
    import torch
    from kernelpro_worker import timing

    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    # The host's time to launch one torch op, before anything of kernelpro's ran in this process
    # and again after (CUPTI started, inside and outside a profiler window, after a blocking
    # synchronize and after polling an event): where the host's launch time comes from.
    out["launch_us"] = {"before": launch_us(torch, "plain")}
    print("launch us before kernelpro:", out["launch_us"]["before"], flush=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.ones(4, device="cuda").add_(1)
        torch.cuda.synchronize()
    evs = list(prof.profiler.kineto_results.events())
    out["kineto_event_attrs"] = [n for n in dir(evs[0]) if not n.startswith("_")] if evs else []
    out["kineto_events"] = [(e.name(), str(e.device_type()), e.device_resource_id(),
                             e.correlation_id()) for e in evs][:20]
    t0 = time.perf_counter()
    tracer, why = timing.tracer_for(torch)
    out["tracer"] = {"ok": tracer is not None, "why": why, "s": time.perf_counter() - t0,
                     "stream": getattr(tracer, "stream_id", None)}
    for way in ("plain", "poll", "flush+sync", "flush+poll", "profiled"):
        out["launch_us"][way] = launch_us(torch, way)
    print("launch us after the tracer:", out["launch_us"], flush=True)
    print(json.dumps(out, indent=1), flush=True)
    rows = []
    cases = [("one", n, 1) for n in (10, 12, 14, 16, 18, 20, 22, 24, 26)]
    cases += [("three", n, 3) for n in (10, 16, 22, 27)]
    for kind, log2, kernels in cases:
        fn = relu_affine_one if kernels == 1 else relu_affine_three
        x = torch.randn(1 << log2, device="cuda")
        sets = [[x.clone()] for _ in range(2)]
        row = {"case": kind, "log2": log2}
        for name, spans in (("span", True), ("events", False)):
            timer = timing.Timer(torch, "cuda", model_of(torch, fn), sets, spans=spans)
            timer.warm_up(0.2, 3)
            t = time.perf_counter()
            res = [timer.block(a.calls) for _ in range(3)]
            wall = (time.perf_counter() - t) / 3
            times = [v for r in res for v in r["times_ms"]]
            host = [v for r in res for v in r["host_ms"]]
            row[name] = {"median_us": statistics.median(times) * 1e3,
                         "host_us": statistics.median(host) * 1e3,
                         "launch_us": statistics.median([v for r in res for v in r["launch_us"]]),
                         "block_wall_ms": wall * 1e3, "sm_mhz": [r["sm_mhz"] for r in res],
                         "warm_mhz": timer.warm_mhz, "flags": {k: sum(r[k] for r in res) for k in (
                             "no_device_work_calls", "foreign_calls", "low_clock_blocks",
                             "repeated_blocks")}, "method": res[0]["method"][:60]}
        span, ksum, n = profiler_span(torch, fn, [x], 50, kernels)
        row["profiler_span_us"], row["profiler_sum_us"] = span, ksum
        d = row["span"]["median_us"] - span
        row["diff_us"], row["ok"] = d, abs(d) <= max(1.0, 0.03 * span)
        rows.append(row)
        print(f"{kind:5s} 2^{log2:<2d} span {row['span']['median_us']:9.2f} profiler {span:9.2f} "
              f"diff {d:7.2f} ok={row['ok']} | events {row['events']['median_us']:9.2f} host "
              f"{row['span']['host_us']:9.2f} launch {row['span']['launch_us']:6.1f} block "
              f"{row['span']['block_wall_ms']:7.1f} ms mhz {row['span']['sm_mhz']} "
              f"flags {row['span']['flags']}", flush=True)
    out["rows"] = rows
    # The reference against itself: two timers of one model, blocks alternating with pauses.
    selfs = []
    for name, n, fn in (("relu_4m", 1 << 22, relu_affine_one),
                        ("swish_16m", 1 << 24, lambda x: x * x.sigmoid()),
                        ("add_128", 128, lambda x: x + x)):
        x = torch.randn(n, device="cuda")
        sets = [[x.clone()] for _ in range(2)]
        ratios = []
        for copy in range(5):
            ta = timing.Timer(torch, "cuda", model_of(torch, fn), sets)
            tb = timing.Timer(torch, "cuda", model_of(torch, fn), sets)
            ta.warm_up(0.5, 3)
            tb.warm_up(0.1, 3)
            ma, mb = [], []
            for blk in range(a.blocks):
                order = (ta, tb) if blk % 2 == 0 else (tb, ta)
                for t in order:
                    r = t.block(10)
                    (ma if t is ta else mb).append(statistics.median(r["times_ms"]))
                    time.sleep(0.003)
            ratios.append(statistics.median(ma) / statistics.median(mb))
        selfs.append({"case": name, "ratios": ratios, "median_us": statistics.median(ma) * 1e3})
        print(f"self {name}: {statistics.median(ma)*1e3:.2f} us ratios "
              + " ".join(f"{r:.4f}" for r in ratios), flush=True)
    out["self"] = selfs
    # A call that leaves work on a side stream, launched from another thread after return.
    side = torch.cuda.Stream()
    y = torch.randn(1 << 24, device="cuda")

    def sneaky(x):
        def later():
            with torch.cuda.stream(side):
                for _ in range(5):
                    y.mul_(1.0001)
        th = threading.Thread(target=later)
        th.start()
        th.join()
        return x + 1

    sets = [[torch.randn(1 << 10, device="cuda")]]
    timer = timing.Timer(torch, "cuda", model_of(torch, sneaky), sets)
    timer.warm_up(0.1, 3)
    r = timer.block(10)
    out["thread_side_stream"] = {"median_us": statistics.median(r["times_ms"]) * 1e3,
                                 "flags": {k: r[k] for k in ("foreign_calls",
                                                             "no_device_work_calls")}}
    print("thread side stream:", out["thread_side_stream"], flush=True)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
