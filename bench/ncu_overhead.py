#!/usr/bin/env python3
"""Profiling overhead per candidate on a GPU: seconds for `kernelpro profile` with ncu only,
as the number of collected metrics grows (ncu replays each kernel once per counter pass).

    bench/ncu_overhead.py [--problem P --candidate C] [--binary B] [--counts 8,16,32,0]

A count of 0 means the whole catalog. Prints a table; asserts nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def catalog(binary, problem, candidate):
    """The catalog's metric names, read from a profile run's own record (ncu values' keys)."""
    out = subprocess.run([binary, "profile", "--problem", problem, "--candidate", candidate,
                          "--no-timeline", "--json"], capture_output=True, text=True)
    record = json.loads(out.stdout.splitlines()[-1])
    kernels = (record.get("ncu") or {}).get("kernels") or []
    if not kernels:
        sys.exit("no ncu metrics: " + "; ".join(record.get("notes", [])))
    return sorted(kernels[0]["values"]), record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default=os.path.join(ROOT, "problems/swish/problem.py"))
    parser.add_argument("--candidate", default=os.path.join(ROOT, "problems/swish/candidates/cuda_swish.py"))
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kernelpro"))
    parser.add_argument("--counts", default="1,8,32,0")
    a = parser.parse_args()
    names, _ = catalog(a.binary, a.problem, a.candidate)  # also warms the build and reference caches
    print(f"ncu overhead: {os.path.relpath(a.candidate, ROOT)}")
    print(f"| {'metrics':>7} | {'seconds':>8} | {'kernels':>7} |")
    print(f"|{'-' * 9}|{'-' * 10}|{'-' * 9}|")
    for count in [int(c) for c in a.counts.split(",")]:
        chosen = names if count == 0 else names[:count]
        start = time.monotonic()
        out = subprocess.run([a.binary, "profile", "--problem", a.problem, "--candidate", a.candidate,
                              "--no-timeline", "--no-sass", "--json", "--metrics", ",".join(chosen)],
                             capture_output=True, text=True)
        seconds = time.monotonic() - start
        record = json.loads(out.stdout.splitlines()[-1]) if out.stdout.strip() else {}
        kernels = len(((record.get("ncu") or {}).get("kernels")) or [])
        print(f"| {len(chosen):>7} | {seconds:>8.1f} | {kernels:>7} |")


if __name__ == "__main__":
    main()
