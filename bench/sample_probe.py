#!/usr/bin/env python3
"""Does keeping a timed call's outputs slow the candidate's other timed calls?

Self-vs-self relu_4m (one 13 us kernel) read 0.986x-0.999x on an H100 (issue 41): the candidate's
kernel ~1 % longer than the same kernel timed as the reference, in the referee's process and in
the candidate's own. One thing only the candidate's blocks do: about one call in five is kept
for verification (its outputs copied to the host and written to a file, then one untimed call).
This probe times two Timers of the same model over the same inputs in one process, blocks
interleaved A B B A ..., under conditions that differ only in what A does after a sampled call:

  none       A keeps nothing (what differs is only where the two timers' buffers lie)
  keep       the candidate's keep: outputs cloned, copied to the host, written as a plain file
  copy       the clone and the copy to the host only, no file
  sleep      no copy, the host asleep for as long as a keep takes (the device idle)
  symmetric  A keeps, B makes the same disturbance (the keep's work, nothing stored)

Per condition: the A/B ratio of medians, and A's calls right after a sampled call against A's
others. Writes JSON; asserts nothing.

    bench/sample_probe.py [--json-out F] [--exp 22] [--rounds 10] [--calls 10] [--p 0.2]
                          [--processes 1]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

CONDITIONS = ("none", "keep", "copy", "sleep", "symmetric")


def _keeper(torch, kind, folder, after):
    """A keep callback for `kind`; `after` collects the indexes of the kept calls."""
    from kernelpro_worker import plain

    def keep(index, set_index, seed, out):
        after.append(index)
        if kind == "sleep":
            time.sleep(0.006)
            return
        snapshot = [out.clone().cpu()]
        if kind in ("keep", "symmetric"):
            plain.save(os.path.join(folder, f"timed_{index}.kp"), snapshot, hashed=False)

    return keep


def _timed_indexes(start, end, kept):
    untimed = {k + 1 for k in kept}
    return [i for i in range(start, end) if i not in untimed]


def run_condition(torch, kind, exp, rounds, calls, p, folder):
    from kernelpro_worker.timing import Timer

    class Relu(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    x = torch.randn(1 << exp, device="cuda")
    sets = [[x.clone()], [x.clone()]]
    a, b = Timer(torch, "cuda", Relu(), sets), Timer(torch, "cuda", Relu(), sets)
    a.warm_up(0.5, 3)
    b.warm_up(0.1, 3)
    times = {"a": [], "b": []}
    after_keep, others = [], []
    for r in range(rounds):
        for name, t in ((("a", a), ("b", b)) if r % 2 == 0 else (("b", b), ("a", a))):
            kept = []
            keeps = kind != "none" and (name == "a" or kind == "symmetric")
            start = t.calls
            block = t.block(calls, p if keeps else 0.0,
                            _keeper(torch, kind, folder, kept) if keeps else None)
            times[name] += block["times_ms"]
            if name == "a":
                follows = {k + 2 for k in kept}
                for i, ms in zip(_timed_indexes(start, t.calls, kept), block["times_ms"]):
                    (after_keep if i in follows else others).append(ms)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    return {"condition": kind, "a_us": med["a"], "b_us": med["b"], "ratio_b_over_a":
            med["b"] / med["a"], "a_after_keep_us": statistics.median(after_keep) * 1e3
            if after_keep else None, "a_after_keep_calls": len(after_keep),
            "a_other_us": statistics.median(others) * 1e3 if others else None}


def one_process(args):
    import torch

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for kind in CONDITIONS:
            rows.append(run_condition(torch, kind, args.exp, args.rounds, args.calls, args.p,
                                      folder))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json-out")
    ap.add_argument("--exp", type=int, default=22)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--p", type=float, default=0.2)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(one_process(args)))
        return 0
    runs = []
    for _ in range(args.processes):  # a fresh process each: placement differs between them
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--exp", str(args.exp),
               "--rounds", str(args.rounds), "--calls", str(args.calls), "--p", str(args.p)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            return 1
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{'condition':<10} {'B/A per process':<44} {'A after keep us':>16} {'A other us':>11}")
    for i, kind in enumerate(CONDITIONS):
        rows = [run[i] for run in runs]
        ratios = " ".join(f"{r['ratio_b_over_a']:.3f}" for r in rows)
        after = [r["a_after_keep_us"] for r in rows if r["a_after_keep_us"] is not None]
        other = [r["a_other_us"] for r in rows if r["a_other_us"] is not None]
        print(f"{kind:<10} {ratios:<44} "
              f"{(statistics.median(after) if after else float('nan')):>16.2f} "
              f"{(statistics.median(other) if other else float('nan')):>11.2f}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(runs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
