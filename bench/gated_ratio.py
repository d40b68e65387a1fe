#!/usr/bin/env python3
"""kernelpro's speedup against an independent gated reading of the same pair, in plain processes.

For each pair (a problem and a candidate), `kernelpro eval --json` gives the speedup (reference
median over candidate median, each the gated span of its device work); bench/profile_calls.py
then profiles the reference's Model and the candidate's ModelNew (the very .so kernelpro built) in
plain Python processes, each call queued behind a ~200 us spin on its stream (`--gate-us`), and
gives the gated ratio: the reference's median span over the candidate's. Beside it: the ratio of
the calls' summed kernel durations (which leaves out the device's own ~1 us between kernels, so a
fused kernel's saving of it does not show) and, for KernelBench's few-shot pairs, KernelBench's
own ratio (its host-inclusive CUDA events) when `--kernelbench-results` holds a
bench/kernelbench_side_by_side.py record of the pair; kernelpro's speedup of such a pair is then
taken from that record's own kernelpro run instead of a second evaluation.

Pairs: `--pair NAME=PROBLEM:CANDIDATE` (repeatable), and with `--kernelbench KB` the few-shot
pairs named by `--kernelbench-pairs` (default: add fuse_gelu), copied from the checkout.
Default pair: scale_add, a fused kernel against a two-kernel reference (bench/problems).

Target (issue 41): kernelpro's speedup within 10 % of the gated ratio on every pair.

    bench/gated_ratio.py --kernelpro BIN --out DIR [--pair N=P:C ...] [--kernelbench KB]
        [--kernelbench-results DIR] [--calls 100]
"""

import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PAIRS = {"scale_add": (os.path.join(HERE, "problems", "scale_add_2p18.py"),
                               os.path.join(HERE, "candidates", "scale_add_fused.py"))}
GATE_US = 200
TOLERANCE = 0.10


def parse_pair(text):
    name, _, rest = text.partition("=")
    problem, _, candidate = rest.partition(":")
    if not name or not problem or not candidate:
        raise ValueError(f"--pair wants NAME=PROBLEM:CANDIDATE, got '{text}'")
    return name, (os.path.abspath(problem), os.path.abspath(candidate))


def _side_by_side_record(results_dir, name):
    """The kernelbench_side_by_side record of a pair, or {}."""
    path = os.path.join(results_dir or "", "rows", f"{name}.json")
    if not results_dir or not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def kernelbench_ratio(results_dir, name):
    """KernelBench's own ratio (reference mean over candidate mean, warm run) from a
    kernelbench_side_by_side record, or None."""
    record = _side_by_side_record(results_dir, name)
    for state in ("kernelbench_warm", "kernelbench_cold"):
        kb = record.get(state) or {}
        ref, cand = kb.get("ref_runtime_ms"), kb.get("runtime_ms")
        if ref and cand and ref > 0 and cand > 0:
            return ref / cand
    return None


def kernelbench_kernelpro(results_dir, name):
    """kernelpro's own warm result of a KernelBench pair from a kernelbench_side_by_side record
    (the same pair, the same binary, one lease), or None: no second evaluation is needed."""
    record = _side_by_side_record(results_dir, name)
    for state in ("kernelpro_warm", "kernelpro_cold"):
        results = (record.get(state) or {}).get("results") or []
        if results and results[0].get("speedup") is not None:
            return results[0]
    return None


def row_for(name, kernelpro, reference, candidate, kb_ratio):
    """A table row from kernelpro's first result and the two gated profiles."""
    kp = kernelpro or {}
    gated = benchlib.ratio((reference or {}).get("span_us"), (candidate or {}).get("span_us"))
    sums = benchlib.ratio((reference or {}).get("sum_us"), (candidate or {}).get("sum_us"))
    speedup = kp.get("speedup")
    off = None if speedup is None or not gated else speedup / gated - 1
    return {"name": name, "status": kp.get("status"), "kernelpro_speedup": speedup,
            "kernelpro_ref_us": benchlib.ms_to_us(kp.get("reference_ms")),
            "kernelpro_cand_us": benchlib.ms_to_us(kp.get("candidate_ms")),
            "gated_ref_us": (reference or {}).get("span_us"),
            "gated_cand_us": (candidate or {}).get("span_us"),
            "gated_ratio": gated, "kernel_sum_ratio": sums, "kernelbench_ratio": kb_ratio,
            "off": off, "passed": off is not None and abs(off) <= TOLERANCE}


HEADERS = ["pair", "kernelpro ref / cand us", "kernelpro speedup", "gated profiler ref / cand us",
           "gated ratio", "kernelpro vs gated", "kernel-duration ratio", "KernelBench ratio",
           "within 10 %"]


def table_row(r):
    return [r["name"],
            f"{benchlib.fmt(r['kernelpro_ref_us'], 2)} / {benchlib.fmt(r['kernelpro_cand_us'], 2)}",
            benchlib.fmt(r["kernelpro_speedup"], 2, "x"),
            f"{benchlib.fmt(r['gated_ref_us'], 2)} / {benchlib.fmt(r['gated_cand_us'], 2)}",
            benchlib.fmt(r["gated_ratio"], 2, "x"),
            "–" if r["off"] is None else f"{100 * r['off']:+.1f} %",
            benchlib.fmt(r["kernel_sum_ratio"], 2, "x"),
            benchlib.fmt(r["kernelbench_ratio"], 2, "x"),
            "pass" if r["passed"] else "FAIL"]


def profile(args, name, cls, module, problem, prebuilt, env):
    json_out = os.path.join(args.out, f"profile-{name}-{cls}.json")
    command = [args.python, os.path.join(HERE, "profile_calls.py"), "--candidate", module,
               "--class", cls, "--problem", problem, "--json-out", json_out,
               "--calls", str(args.calls), "--gate-us", str(GATE_US)]
    if prebuilt:
        command += ["--prebuilt"] + prebuilt
    log = os.path.join(args.out, f"profile-{name}-{cls}.log")
    code, _ = benchlib.run_logged(command, log, env, args.timeout_s)
    if code != 0 or not os.path.exists(json_out):
        print(f"{name} {cls} profiler: exit {code}, see {log}", flush=True)
        return None
    with open(json_out) as f:
        return json.load(f)["rows"][0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelpro", default=benchlib.DEFAULT_KERNELPRO)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pair", action="append", default=[])
    parser.add_argument("--kernelbench", help="KernelBench checkout (never committed)")
    parser.add_argument("--kernelbench-pairs", nargs="*", default=["add", "fuse_gelu"])
    parser.add_argument("--kernelbench-results", help="a kernelbench_side_by_side.py --out")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout-s", type=float, default=600)
    args = parser.parse_args()
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    pairs = dict(DEFAULT_PAIRS)
    try:
        pairs.update(parse_pair(p) for p in args.pair)
    except ValueError as e:
        parser.error(str(e))
    if args.kernelbench:
        from kernelbench_side_by_side import find_pair  # noqa: PLC0415

        for name in args.kernelbench_pairs:
            found = find_pair(os.path.abspath(args.kernelbench), name)
            if found is None:
                parser.error(f"no few-shot pair '{name}' in {args.kernelbench}")
            folder = os.path.join(args.out, "pairs", name)
            os.makedirs(folder, exist_ok=True)
            shutil.copy(found[0], os.path.join(folder, "problem.py"))
            shutil.copy(found[1], os.path.join(folder, "candidate.py"))
            pairs[name] = (os.path.join(folder, "problem.py"), os.path.join(folder, "candidate.py"))

    env = dict(os.environ, TORCH_EXTENSIONS_DIR=os.path.join(args.out, "torch_extensions"))
    rows = []
    for name, (problem, candidate) in pairs.items():
        result = kernelbench_kernelpro(args.kernelbench_results, name)
        if result is not None:
            print(f"{name} kernelpro (kernelbench_side_by_side's run): {result.get('status')} "
                  f"{benchlib.fmt(result.get('speedup'), 3, 'x')}", flush=True)
        else:
            run = benchlib.run_kernelpro(benchlib.kernelpro_command(args.kernelpro, problem,
                                                                    [candidate]),
                                         timeout_s=args.timeout_s)
            result = run.results[0] if run.results else {}
            print(f"{name} kernelpro ({run.wall_s:.1f} s): {result.get('status')} "
                  f"{benchlib.fmt(result.get('speedup'), 3, 'x')}"
                  + ("" if run.results else f" {run.stderr_tail[-300:]}"), flush=True)
        prebuilt = ((result.get("build") or {}).get("shared_objects")) or []
        reference = profile(args, name, "Model", problem, problem, [], env)
        cand = profile(args, name, "ModelNew", candidate, problem, prebuilt, env)
        row = row_for(name, result, reference, cand,
                      kernelbench_ratio(args.kernelbench_results, name))
        row["kernelpro_result"] = result
        row["gated_reference"] = {k: v for k, v in (reference or {}).items() if k != "per_call"}
        row["gated_candidate"] = {k: v for k, v in (cand or {}).items() if k != "per_call"}
        rows.append(row)
    table = benchlib.markdown_table(HEADERS, [table_row(r) for r in rows])
    print(f"\nkernelpro eval's speedup vs an independent gated profiler reading in plain processes "
          f"({args.calls} calls each, behind a {GATE_US} us spin)\n")
    print(table)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table + "\n")
    benchlib.write_json(os.path.join(args.out, "results.json"), {"rows": rows})
    sys.exit(0 if rows and all(r["passed"] for r in rows) else 1)


if __name__ == "__main__":
    main()
