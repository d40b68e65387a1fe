#!/usr/bin/env python3
"""Harness overhead per candidate: cold build, cached build, check, time.

Runs `kernelpro eval --json` twice on one problem and candidate — first with an empty cache
(the compiler and the reference run), then again (both cached) — and prints the seconds each
phase took as a table. Not a test: nothing is asserted.

    bench/harness_overhead.py [--device cpu|cuda] [--problem P] [--candidate C] [--binary B]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = [("scan", "scan (static checks)"), ("reference", "referee start + reference"),
          ("build", "build (beside the reference)"), ("check", "load + check + compare"),
          ("time", "timing rounds + verify"), ("total", "total")]


def run(binary, args, cache):
    cmd = [binary, "eval", "--json", "--cache-dir", cache] + args
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    if out.returncode != 0 or not lines:
        sys.exit(f"eval failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(lines[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--problem")
    parser.add_argument("--candidate")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kernelpro"))
    parser.add_argument("--timing-trials", default="100")
    a = parser.parse_args()
    if a.device == "cpu":
        problem = a.problem or os.path.join(ROOT, "tests/problems/tiny_swish.py")
        candidate = a.candidate or os.path.join(ROOT, "tests/candidates/good/cpu_tiny_swish.py")
    else:
        problem = a.problem or os.path.join(ROOT, "problems/swish/problem.py")
        candidate = a.candidate or os.path.join(ROOT, "problems/swish/candidates/cuda_swish.py")
    args = ["--device", a.device, "--problem", problem, "--candidate", candidate,
            "--timing-trials", a.timing_trials]
    with tempfile.TemporaryDirectory(prefix="kernelpro-bench-") as cache:
        cold = run(a.binary, args, cache)
        warm = run(a.binary, args, cache)
    print(f"harness overhead: {os.path.relpath(candidate, ROOT)} on {a.device}"
          f" (status {warm['status']}, {warm['candidate_timing']['count'] if warm['candidate_timing'] else 0} timed calls per side)")
    print(f"| {'phase':<26} | {'cold cache (s)':>14} | {'warm cache (s)':>14} |")
    print(f"|{'-' * 28}|{'-' * 16}|{'-' * 16}|")
    for key, label in PHASES:
        print(f"| {label:<26} | {cold['phase_seconds'][key]:>14.2f} | {warm['phase_seconds'][key]:>14.2f} |")
    print(f"build cached: cold={cold['build']['cached']} warm={warm['build']['cached']}")


if __name__ == "__main__":
    main()
