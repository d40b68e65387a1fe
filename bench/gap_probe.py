#!/usr/bin/env python3
"""Why are the gaps between a Python call's kernels wider under kernelpro's timer?

`kernelpro doctor --timing` compares the timer's span of a three-op torch call with one profiler
session over a plain loop; the timer read about 2.4 us more per gap between kernels (H200, run-4).
This probe times the same call (x*2+1, relu on 2^10 floats: three kernels, host-bound) in one
process under conditions that add the timer's differences one at a time, rounds interleaved so
drift cancels, every condition inside profiler windows of `--calls` calls as the timer's blocks:

  plain        flush on the default stream, synchronize, call, synchronize (plain_spans)
  side-flush   the flush on a private stream instead
  marker       + the timer's marker copy on that stream
  refill       + the inputs refilled (perturbed) on that stream
  poll         + an event recorded there and polled, then synchronize (the timer's preparation)
  module       + the call through nn.Module under no_grad (Timer.forward)
  busy         plain, with ~30 us of Python work between the synchronize and the call
  timer        Timer._one itself
  timer-nogc   Timer._one with Python's garbage collector off
  default-marker  poll, with the marker on the call's (default) stream, last before the call
  all-default  the timer's preparation all on the default stream
  tail-event   poll, the polled event recorded on the call's stream instead
  ctx-only     plain, after entering and leaving the private stream's context (no work there)

Per condition: the median span (first kernel start to last kernel end), the two gaps, the host's
time from the call to its return. Writes JSON; asserts nothing.

    bench/gap_probe.py [--json-out F] [--calls 30] [--rounds 8]
"""

import argparse
import gc
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

CONDITIONS = ["plain", "side-flush", "marker", "refill", "poll", "module", "busy", "timer",
              "timer-nogc", "default-marker", "all-default", "ctx-only", "tail-event"]


def three(x):
    return (x * 2.0).add(1.0).relu()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json-out", default="")
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--log2", type=int, default=10)
    a = ap.parse_args()
    import torch
    from kernelpro_worker import timing

    class Model(torch.nn.Module):
        def forward(self, x):
            return three(x)

    x = torch.randn(1 << a.log2, device="cuda")
    timer = timing.Timer(torch, "cuda", Model(), [[x.clone()], [x.clone()]])
    timer.warm_up(0.2, 5)
    tracer = timer.tracer
    side = tracer.stream
    cuda = torch.autograd.DeviceType.CUDA
    flush = timer.flush
    base = [x.clone()]
    bufs = [x.clone()]

    def busy():
        junk = []
        t = time.perf_counter()
        while time.perf_counter() - t < 30e-6:
            junk.append({"a": len(junk)})

    def prepare(cond):
        if cond in ("plain", "busy", "ctx-only"):
            if cond == "ctx-only":
                with torch.cuda.stream(side):
                    pass
            flush.zero_()
            torch.cuda.synchronize()
            if cond == "busy":
                busy()
            return
        if cond == "all-default":
            timing.perturbed(torch, base, int.from_bytes(os.urandom(8), "little") >> 2,
                             into=bufs)
            flush.zero_()
            tracer.target.copy_(tracer.source, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record()
            while not ready.query():
                pass
            torch.cuda.synchronize()
            return
        with torch.cuda.stream(side):
            if cond in ("refill", "poll", "module", "default-marker", "tail-event"):
                timing.perturbed(torch, base, int.from_bytes(os.urandom(8), "little") >> 2,
                                 into=bufs)
            flush.zero_()
            if cond not in ("side-flush", "default-marker"):
                tracer.mark()
            ready = torch.cuda.Event()
            ready.record()
        if cond == "tail-event":  # the last command before the call: an event on its stream
            ready = torch.cuda.Event()
            ready.record()
        if cond in ("poll", "module", "default-marker", "tail-event"):
            while not ready.query():
                pass
        if cond == "default-marker":
            tracer.target.copy_(tracer.source, non_blocking=True)
        torch.cuda.synchronize()

    results = {c: {"span": [], "gap1": [], "gap2": [], "host": []} for c in CONDITIONS}
    for r in range(a.rounds):
        order = CONDITIONS if r % 2 == 0 else CONDITIONS[::-1]
        for cond in order:
            host = []
            if cond.startswith("timer"):
                if cond == "timer-nogc":
                    gc.disable()
                timer.tracer.open()
                timer.tracing = True
                for _ in range(a.calls):
                    row = timer._one()
                    host.append(row[4] * 1e6)
                    del row
                timer.tracer.mark()
                torch.cuda.synchronize()
                timer.tracing = False
                records = timer.tracer.close()
                gc.enable()
            else:
                tracer.open()
                for _ in range(a.calls):
                    prepare(cond)
                    t0 = time.perf_counter()
                    if cond == "module":
                        with torch.no_grad():
                            out = timer.model(bufs[0])
                    else:
                        with torch.no_grad():
                            out = three(x)
                    host.append((time.perf_counter() - t0) * 1e6)
                    torch.cuda.synchronize()
                    del out
                records = tracer.close()
            work = sorted((e["correlation"], e["start_ns"], e["end_ns"]) for e in records
                          if e["stream"] != tracer.stream_id and e["name"].find("Memcpy") < 0)
            if cond in ("plain", "busy", "ctx-only"):  # the flush is on the default stream: groups of 4
                groups = [work[i + 1:i + 4] for i in range(0, len(work), 4)]
            elif cond == "all-default":  # refill (2 kernels), flush, then the call's 3
                groups = [work[i + 3:i + 6] for i in range(0, len(work), 6)]
            else:
                groups = [work[i:i + 3] for i in range(0, len(work), 3)]
            res = results[cond]
            for g in groups:
                if len(g) != 3:
                    continue
                res["span"].append((g[2][2] - g[0][1]) / 1e3)
                res["gap1"].append((g[1][1] - g[0][2]) / 1e3)
                res["gap2"].append((g[2][1] - g[1][2]) / 1e3)
            res["host"] += host
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(),
           "log2": a.log2, "calls": a.calls, "rounds": a.rounds, "conditions": {}}
    for cond in CONDITIONS:
        res = results[cond]
        row = {k: round(statistics.median(v), 2) if v else None for k, v in res.items()}
        row["n"] = len(res["span"])
        out["conditions"][cond] = row
        print(f"{cond:12s} span {row['span']} gap1 {row['gap1']} gap2 {row['gap2']} "
              f"host {row['host']} n={row['n']}", flush=True)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
