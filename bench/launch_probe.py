"""Where does the host's launch time of one torch op go in kernelpro's processes?

Each condition runs in a fresh process: it sets up one thing kernelpro's timing processes have
(the worker's imports, NVML, a profiler session before, a profiler window around, the worker's
watchdog, polling an event before the call) and then times `x.relu()` on 2^10 floats, each call
after a device synchronisation, 200 times. Prints one line per condition: the median and the
10th/90th percentile of the host's time (us) from the call to its return, and the same for 200
back-to-back calls without a synchronisation between them (the launch pace).

    python3 bench/launch_probe.py [--json-out FILE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CONDITIONS = ["plain", "imports", "nvml", "after-profiler", "after-profiler-teardown",
              "in-profiler", "watchdog", "poll", "flush", "timer-block", "after-timer-block"]


def measure(torch, prepare=None, calls=200):
    x = torch.randn(1 << 10, device="cuda")
    after_sync, pace = [], []
    for _ in range(20):
        x.relu()
    torch.cuda.synchronize()
    for _ in range(calls):
        if prepare:
            prepare()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x.relu()
        after_sync.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    for _ in range(calls):
        t0 = time.perf_counter()
        x.relu()
        pace.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()

    def q(v):
        v = sorted(v)
        return [round(v[len(v) // 10], 2), round(statistics.median(v), 2),
                round(v[9 * len(v) // 10], 2)]

    return {"after_sync_us": q(after_sync), "pace_us": q(pace)}


def child(condition):
    import torch

    torch.ones(1, device="cuda")
    prepare = None
    if condition != "plain":
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
        from kernelpro_worker import timing  # noqa: F401 - the worker's imports
        from kernelpro_worker import steps  # noqa: F401
    if condition == "nvml":
        timing.clock_reader().sm_mhz()
    if condition.startswith("after-profiler"):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            torch.ones(4, device="cuda").add_(1)
            torch.cuda.synchronize()
    if condition == "watchdog":
        import faulthandler

        faulthandler.dump_traceback_later(600, exit=True)
    if condition == "poll":
        def prepare():
            e = torch.cuda.Event()
            e.record()
            while not e.query():
                pass
    if condition == "flush":
        buf = torch.empty(120 << 20, dtype=torch.int8, device="cuda")
        stream = torch.cuda.Stream()

        def prepare():
            with torch.cuda.stream(stream):
                buf.zero_()
    if condition in ("timer-block", "after-timer-block"):
        model = torch.nn.ReLU()
        timer = timing.Timer(torch, "cuda", model, [[torch.randn(1 << 10, device="cuda")]])
        timer.warm_up(0.2, 5)
        res = timer.block(50)
        if condition == "timer-block":
            return {"timer_launch_us": round(statistics.median(res["launch_us"]), 2),
                    "timer_host_us": round(statistics.median(res["host_ms"]) * 1e3, 2),
                    "timer_span_us": round(statistics.median(res["times_ms"]) * 1e3, 2)}
    if condition == "in-profiler":
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            return measure(torch)
    return measure(torch, prepare)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json-out", default="")
    ap.add_argument("--child", default="")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child)))
        return
    out = {}
    for condition in CONDITIONS:
        env = dict(os.environ)
        if condition == "after-profiler-teardown":
            env["TEARDOWN_CUPTI"] = "1"
        proc = subprocess.run([sys.executable, __file__, "--child", condition], env=env,
                              capture_output=True, text=True, timeout=300)
        lines = proc.stdout.strip().splitlines()
        try:
            out[condition] = json.loads(lines[-1])
        except (IndexError, ValueError):
            out[condition] = {"error": (proc.stderr or proc.stdout)[-400:]}
        print(f"{condition:24s} {json.dumps(out[condition])}", flush=True)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
