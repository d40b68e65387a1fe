#!/usr/bin/env python3
"""Cold builds side by side: torch's load_inline against kernelpro's build of the same sources.

For each candidate file, a fresh process imports it twice over (each time with nothing cached):
once with plain `torch.utils.cpp_extension.load_inline` building into an empty directory, once
through the worker's BuildCache (build.ninja run by kernelpro_worker.fastbuild, with the
precompiled headers of the trusted pch step). Only the load_inline calls are timed (the import of
torch is the same for both). The pch step runs first, once, and its time is shown apart: the
binary runs it once per toolchain and caches it. Prints a table; asserts nothing.

    bench/build_speed.py [--device cpu|cuda] [--repeat N] [CANDIDATE.py ...]

Defaults: on cpu, problems/swish/candidates/cpu_swish.py and tests/candidates/good/
cpu_tiny_swish.py; on cuda, problems/swish/candidates/cuda_swish.py as well.
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


def child(mode, candidate, work, pch_json):
    """Imports `candidate` with load_inline timed; prints {"seconds", "notes", "error"}."""
    from kernelpro_worker import loading
    from kernelpro_worker.buildcache import BuildCache
    from kernelpro_worker.common import load_module
    from kernelpro_worker.fastbuild import PchOffer

    loading.import_torch(os.environ.get("KP_BENCH_DEVICE", "cpu"))
    from torch.utils import cpp_extension

    spent, notes = [0.0], []
    if mode == "kernelpro":
        offer = None
        if pch_json:
            with open(pch_json) as f:
                result = json.load(f)
            offer = PchOffer(result["pch_dir"], result["pch_manifest"])
        cache = BuildCache(os.path.join(work, "builds"), pch=offer)
        cache.install()
        inner = cpp_extension.load_inline
    else:
        real = cpp_extension.load_inline
        counter = [0]

        def inner(*args, **kwargs):
            counter[0] += 1
            kwargs["build_directory"] = os.path.join(work, f"ext{counter[0]}")
            os.makedirs(kwargs["build_directory"])
            return real(*args, **kwargs)

    def timed(*args, **kwargs):
        start = time.monotonic()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += time.monotonic() - start

    cpp_extension.load_inline = timed
    error = ""
    try:
        load_module(candidate, "kp_bench")
    except Exception as e:  # noqa: BLE001 - reported in the table
        error = f"{type(e).__name__}: {str(e)[:300]}"
    if mode == "kernelpro":
        for record in cache.extensions:
            notes += record.get("build_notes", [])
    print(json.dumps({"seconds": spent[0], "notes": notes, "error": error}))


def run_child(mode, candidate, device, pch_json):
    with tempfile.TemporaryDirectory(prefix="kp-build-speed-") as work:
        env = dict(os.environ, KP_BENCH_DEVICE=device)
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode,
                              candidate, work, pch_json or ""], capture_output=True, text=True,
                             env=env)
        lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
        if out.returncode != 0 or not lines:
            return {"seconds": float("nan"), "notes": [], "error": out.stderr[-500:]}
        return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--repeat", type=int, default=1, help="cold builds per side (median)")
    parser.add_argument("--pch-dir", help="where the pch step keeps its headers (default: temp)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("candidates", nargs="*")
    a = parser.parse_args()
    if a.child:
        child(*a.child)
        return
    candidates = a.candidates or [
        os.path.join(ROOT, "problems/swish/candidates/cpu_swish.py"),
        os.path.join(ROOT, "tests/candidates/good/cpu_tiny_swish.py")] + (
        [os.path.join(ROOT, "problems/swish/candidates/cuda_swish.py")]
        if a.device == "cuda" else [])

    from kernelpro_worker import pch

    pch_dir = a.pch_dir or tempfile.mkdtemp(prefix="kp-build-speed-pch-")
    start = time.monotonic()
    result = pch.step_pch({"device": a.device, "pch_dir": pch_dir})
    pch_seconds = time.monotonic() - start
    pch_json = os.path.join(pch_dir, "pch-result.json")
    with open(pch_json, "w") as f:
        json.dump(result, f)
    made = [e for e in result["entries"] if not e.get("cached") and "error" not in e]
    print(f"pch step (once per toolchain, cached after): {pch_seconds:.1f} s, "
          f"{len(made)} header(s) made, {len(result['entries'])} flag set(s)")
    for entry in result["entries"]:
        if "error" in entry:
            print(f"  pch for {entry['variant']} failed: {entry['error'][:300]}")

    rows = []
    for candidate in candidates:
        plain, ours, notes, errors = [], [], [], []
        for _ in range(a.repeat):
            p = run_child("load_inline", candidate, a.device, None)
            k = run_child("kernelpro", candidate, a.device, pch_json)
            plain.append(p["seconds"])
            ours.append(k["seconds"])
            notes = k["notes"]
            errors += [e for e in (p["error"], k["error"]) if e]
        p_med, k_med = statistics.median(plain), statistics.median(ours)
        rows.append((os.path.relpath(candidate, ROOT), p_med, k_med, k_med / p_med, notes, errors))

    print(f"\ncold build of each candidate's load_inline calls, {a.device}, "
          f"median of {a.repeat}, {os.cpu_count()} CPUs")
    width = max(len(r[0]) for r in rows)
    print(f"{'candidate':<{width}}  {'load_inline s':>13}  {'kernelpro s':>11}  {'ratio':>6}")
    for name, p_med, k_med, ratio, _, _ in rows:
        print(f"{name:<{width}}  {p_med:>13.2f}  {k_med:>11.2f}  {ratio:>6.2f}")
    for name, _, _, _, notes, errors in rows:
        for note in notes:
            print(f"  {name}: {note}")
        for error in errors:
            print(f"  {name}: ERROR {error}")


if __name__ == "__main__":
    main()
