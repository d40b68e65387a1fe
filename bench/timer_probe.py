#!/usr/bin/env python3
"""The timer itself, in one process, with and without its device hold: per-block medians.

kernelpro's timer (python/kernelpro_worker/timing.py) times a torch model the way the referee and
a candidate's process do: inputs refilled with new values and the L2 flushed before each call,
CUDA events around it. Here it times two short references (a 128-element add, ~3 us; a 2^22
element relu, ~10 us) and one longer one (a 2^24 element swish) in blocks of `--calls` calls with
an idle pause between blocks (as when the referee and a candidate take turns), once with the
device hold before each call (the default) and once without (after the flush alone), and prints
each block's median, so that dips in clocks or stalls of the host show as blocks apart from the
rest. Also prints KernelBench's way for comparison: events around the call on an idle device, no
flush. Prints a table and writes JSON; asserts nothing.

    bench/timer_probe.py [--blocks 10] [--calls 10] [--pause-ms 30] [--json-out F] [--dry-run]
"""

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

CASES = {
    "add_128": (lambda torch: [torch.randn(1, 128), torch.randn(1, 128)], lambda a, b: a + b),
    "relu_4m": (lambda torch: [torch.randn(1 << 22)], lambda x: x.relu()),
    "swish_16m": (lambda torch: [torch.randn(1 << 24)], lambda x: x * x.sigmoid()),
}


def kernelbench_style(torch, fn, args, calls):
    """Events around the call on an idle device (synchronised after each), no flush."""
    times = []
    for _ in range(calls):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times


def probe(torch, blocks, calls, pause_s):
    from kernelpro_worker.timing import Timer

    class Model(torch.nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, *args):
            return self.fn(*args)

    rows = []
    for name, (make, fn) in CASES.items():
        sets = [[x.cuda() for x in make(torch)] for _ in range(3)]
        row = {"case": name}
        for variant, hold in (("hold", True), ("flush only", False)):
            timer = Timer(torch, "cuda", Model(fn), sets, hold=hold)
            timer.warm_up(0.5, 3)
            medians, launches = [], []
            for _ in range(blocks):
                time.sleep(pause_s)
                timer.warm_up(0.0, 1)
                times, _ = timer.block(calls)
                medians.append(statistics.median(times) * 1e3)
                launches.extend(timer.launch_s)
            launch = statistics.median(launches) * 1e6 if launches else None
            row[variant] = {"block_medians_us": medians, "method": timer.method,
                            "host_launch_us": launch}
        kb = []
        for _ in range(blocks):
            time.sleep(pause_s)
            kb.append(statistics.median(kernelbench_style(torch, fn, sets[0], calls)) * 1e3)
        row["kernelbench style"] = {"block_medians_us": kb}
        rows.append(row)
    return rows


def table(rows):
    lines = ["| case | way | median of blocks (us) | min / max block (us) | host launch (us) "
             "| blocks |", "|---|---|---|---|---|---|"]
    for row in rows:
        for way in ("hold", "flush only", "kernelbench style"):
            m = row[way]["block_medians_us"]
            launch = row[way].get("host_launch_us")
            lines.append(f"| {row['case']} | {way} | {statistics.median(m):.2f} | "
                         f"{min(m):.2f} / {max(m):.2f} | "
                         f"{'-' if launch is None else f'{launch:.1f}'} | "
                         f"{' '.join(f'{v:.1f}' for v in m)} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--pause-ms", type=float, default=30.0)
    parser.add_argument("--json-out")
    parser.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    a = parser.parse_args()
    if a.dry_run:
        print(f"would time {', '.join(CASES)}: {a.blocks} blocks of {a.calls} calls, "
              f"{a.pause_ms} ms apart, with the hold, after the flush only, and KernelBench's way")
        return 0
    import torch

    if not torch.cuda.is_available():
        print("timer_probe: needs a CUDA device", file=sys.stderr)
        return 2
    rows = probe(torch, a.blocks, a.calls, a.pause_ms / 1e3)
    print(table(rows))
    print()
    print("hold:", rows[0]["hold"]["method"])
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
