#!/usr/bin/env python3
"""Profiling overhead per candidate on a GPU: seconds for `kernelpro profile` with ncu only,
as the number of collected metrics grows (ncu replays each kernel once per counter pass).

    bench/ncu_overhead.py [--problem P --candidate C] [--binary B] [--counts 8,16,32,0]

A count of 0 means the whole catalog; the first row (no ncu) is the fixed cost of a profile run
(worker start, cached build and reference), so ncu's own cost is a row minus that one. Prints a
table; asserts nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def catalog(binary):
    """The catalog's metric names, in the catalog's order (grouped by category)."""
    out = subprocess.run([binary, "profile", "--list-metrics", "--json"], capture_output=True, text=True, check=True)
    return [m["name"] for m in json.loads(out.stdout)]


def profile(binary, problem, candidate, metrics):
    """Seconds and the record of one `kernelpro profile` with ncu only."""
    start = time.monotonic()
    ncu = ["--metrics", ",".join(metrics)] if metrics else ["--no-ncu"]
    out = subprocess.run([binary, "profile", "--problem", problem, "--candidate", candidate,
                          "--no-timeline", "--no-sass", "--json"] + ncu, capture_output=True, text=True)
    seconds = time.monotonic() - start
    lines = out.stdout.strip().splitlines()
    return seconds, (json.loads(lines[-1]) if lines else {"notes": [out.stderr.strip()[-300:]]})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default=os.path.join(ROOT, "problems/swish/problem.py"))
    parser.add_argument("--candidate", default=os.path.join(ROOT, "problems/swish/candidates/cuda_swish.py"))
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kernelpro"))
    parser.add_argument("--counts", default="1,8,32,0")
    a = parser.parse_args()
    names = catalog(a.binary)
    # Warm the build and reference caches, so rows measure ncu rather than the first build.
    profile(a.binary, a.problem, a.candidate, names[:1])
    print(f"ncu overhead: {os.path.relpath(a.candidate, ROOT)} (seconds for one `kernelpro profile --no-sass "
          f"--no-timeline`, process start to record)")
    print(f"| {'metrics':>7} | {'seconds':>8} | {'kernels':>7} | {'replay passes':>13} |")
    print(f"|{'-' * 9}|{'-' * 10}|{'-' * 9}|{'-' * 15}|")
    seconds, _ = profile(a.binary, a.problem, a.candidate, None)
    print(f"| {'no ncu':>7} | {seconds:>8.1f} | {'-':>7} | {'-':>13} |")
    for count in [int(c) for c in a.counts.split(",")]:
        chosen = names if count == 0 else names[:count]
        seconds, record = profile(a.binary, a.problem, a.candidate, chosen)
        kernels = ((record.get("ncu") or {}).get("kernels")) or []
        passes = kernels[0]["values"].get("profiler__replayer_passes", float("nan")) if kernels else float("nan")
        print(f"| {len(chosen):>7} | {seconds:>8.1f} | {len(kernels):>7} | {passes:>13.0f} |")
        if not kernels:
            print("  no kernels: " + "; ".join(record.get("notes", [])))

if __name__ == "__main__":
    main()
