#!/usr/bin/env python3
"""kernelpro eval and KernelBench's eval_kernel_against_ref on the same candidates, same GPU.

The candidates are KernelBench's own few-shot pairs (reference + ModelNew, in its prompts folder),
copied at run time from a KernelBench checkout that is never committed here. Each pair is
evaluated four times, in this order: KernelBench cold, kernelpro cold, KernelBench warm,
kernelpro warm. Cold means an empty build directory (KernelBench: its build_dir and
TORCH_EXTENSIONS_DIR; kernelpro: a new --cache-dir); warm is the second evaluation, builds
cached. Every evaluation is a fresh process and its wall time includes interpreter start and
imports, as a user sees it. KernelBench runs with its script defaults (5 correctness trials,
100 timed calls, cuda_event); kernelpro with its defaults.

`--batch NAME` adds one `kernelpro eval` of `--batch-size` copies of that pair's candidate (each
copy's CUDA source differs by a comment, so each is its own build), cold and warm: the cost per
candidate when a search hands kernelpro a whole iteration at once.

Each pair's record goes to OUT/rows/NAME.json; the tables cover every record in OUT, so runs
with different --candidates into the same OUT add up to one table (scripts/gpu_verify splits the
pairs over phases to keep each under the device's time limit).

    bench/kernelbench_side_by_side.py --kernelbench KB --kernelpro BIN --out DIR
        [--candidates add fuse_gelu tiled_matmul flash_attn] [--batch fuse_gelu] [--dry-run]
"""

import argparse
import glob
import json
import os
import shlex
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

PAIRS = ["add", "fuse_gelu", "tiled_matmul", "flash_attn"]
# Where KernelBench keeps its few-shot pairs: 0.2 and later, then the older layout.
PROMPT_DIRS = ["src/kernelbench/prompts/few_shot", "src/prompts/few_shot"]
EVAL_ONE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernelbench_eval_one.py")


def find_pair(kernelbench, name):
    """(reference, candidate) paths of a few-shot pair, or None."""
    for folder in PROMPT_DIRS:
        ref = os.path.join(kernelbench, folder, f"model_ex_{name}.py")
        new = os.path.join(kernelbench, folder, f"model_new_ex_{name}.py")
        if os.path.exists(ref) and os.path.exists(new):
            return ref, new
    return None


def distinct_copy(source, index):
    """The candidate's source with a comment in its CUDA code naming the copy, so that a
    content-keyed build cache sees a new source (as it would for a new LLM candidate)."""
    marker = "#include"
    at = source.find(marker)
    comment = f"// kernelpro bench: batch copy {index}\n"
    if at < 0:
        return f"# kernelpro bench: batch copy {index}\n" + source
    return source[:at] + comment + source[at:]


def kernelbench_status(report):
    if report.get("error"):
        return "error"
    if not report.get("compiled"):
        return "compile_error"
    return "correct" if report.get("correctness") else "incorrect"


def run_kernelbench(args, pair_dir, build_dir, log_path):
    """One KernelBench evaluation in its own process; wall time as the user sees it."""
    json_out = log_path.replace(".log", ".json")
    command = [args.python, EVAL_ONE, "--kernelbench", args.kernelbench,
               "--problem", os.path.join(pair_dir, "problem.py"),
               "--candidate", os.path.join(pair_dir, "candidate.py"),
               "--build-dir", build_dir, "--json-out", json_out]
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=build_dir)
    if args.dry_run:
        return {"command": command}
    code, wall = benchlib.run_logged(command, log_path, env, args.timeout_s)
    report = {}
    if os.path.exists(json_out):
        with open(json_out) as f:
            report = json.load(f)
    elif code == 124:
        report = {"error": f"timed out after {args.timeout_s} s"}
    else:
        report = {"error": f"exit {code} without a report; see {log_path}"}
    report.update(command=command, wall_s=wall, exit_code=code, status=kernelbench_status(report))
    return report


def run_kernelpro(args, problem, candidates, cache_dir):
    command = benchlib.kernelpro_command(args.kernelpro, problem, candidates, cache_dir=cache_dir,
                                         extra=["-j", str(len(candidates))] + args.kernelpro_arg)
    if args.dry_run:
        return {"command": command}
    return benchlib.run_kernelpro(command, timeout_s=args.timeout_s).to_json()


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def side_by_side(args, name, reference, candidate):
    pair_dir = fresh_dir(os.path.join(args.out, "pairs", name))
    shutil.copy(reference, os.path.join(pair_dir, "problem.py"))
    shutil.copy(candidate, os.path.join(pair_dir, "candidate.py"))
    kb_build = fresh_dir(os.path.join(args.out, "kernelbench-build", name))
    kp_cache = fresh_dir(os.path.join(args.out, "kernelpro-cache", name))
    logs = os.path.join(args.out, "logs")
    os.makedirs(logs, exist_ok=True)
    record = {"name": name, "reference": reference, "candidate": candidate}
    problem = os.path.join(pair_dir, "problem.py")
    cand = os.path.join(pair_dir, "candidate.py")
    for state in ("cold", "warm"):
        print(f"{name}: KernelBench {state}", flush=True)
        record[f"kernelbench_{state}"] = run_kernelbench(
            args, pair_dir, kb_build, os.path.join(logs, f"{name}-kernelbench-{state}.log"))
        print(f"{name}: kernelpro {state}", flush=True)
        record[f"kernelpro_{state}"] = run_kernelpro(args, problem, [cand], kp_cache)
    return record


def batch(args, name, reference, candidate):
    folder = fresh_dir(os.path.join(args.out, "batch", name))
    problem = os.path.join(folder, "problem.py")
    shutil.copy(reference, problem)
    with open(candidate) as f:
        source = f.read()
    copies = []
    for i in range(1, args.batch_size + 1):
        path = os.path.join(folder, f"candidate_{i}.py")
        with open(path, "w") as f:
            f.write(distinct_copy(source, i))
        copies.append(path)
    cache = fresh_dir(os.path.join(args.out, "kernelpro-cache", f"batch-{name}"))
    record = {"name": name, "batch_size": args.batch_size}
    for state in ("cold", "warm"):
        print(f"batch {name} x{args.batch_size}: kernelpro {state}", flush=True)
        record[state] = run_kernelpro(args, problem, copies, cache)
    return record


# ---- tables (pure: records in, Markdown out) ----

def _kernelpro_first(run):
    results = (run or {}).get("results") or []
    return results[0] if results else {}


def side_by_side_row(record):
    kb_cold, kb_warm = record.get("kernelbench_cold", {}), record.get("kernelbench_warm", {})
    kp_cold, kp_warm = record.get("kernelpro_cold", {}), record.get("kernelpro_warm", {})
    kp = _kernelpro_first(kp_warm) or _kernelpro_first(kp_cold)
    kb = kb_warm if kb_warm.get("runtime_ms") is not None else kb_cold

    def us(ms):  # KernelBench marks "no time" with -1
        return benchlib.fmt(benchlib.ms_to_us(ms if ms is not None and ms >= 0 else None), 1)

    return [record["name"],
            benchlib.fmt(kb_cold.get("wall_s"), 1), benchlib.fmt(kb_warm.get("wall_s"), 1),
            benchlib.fmt(kp_cold.get("wall_s"), 1), benchlib.fmt(kp_warm.get("wall_s"), 1),
            benchlib.fmt(benchlib.ratio(kp_cold.get("wall_s"), kb_cold.get("wall_s")), 2, "x"),
            benchlib.fmt(benchlib.ratio(kp_warm.get("wall_s"), kb_warm.get("wall_s")), 2, "x"),
            f"{us(kb.get('ref_runtime_ms'))} / {us(kb.get('runtime_ms'))}",
            f"{us(kp.get('reference_ms'))} / {us(kp.get('candidate_ms'))}",
            f"{kb_cold.get('status', '–')} / {kb_warm.get('status', '–')}",
            f"{_kernelpro_first(kp_cold).get('status', '–')} / {kp.get('status', '–')}"]


SIDE_BY_SIDE_HEADERS = [
    "candidate", "KernelBench cold s", "KernelBench warm s", "kernelpro cold s",
    "kernelpro warm s", "ratio cold (target <= 1.0)", "ratio warm (target <= 1.5)",
    "KernelBench ref / cand us (mean)", "kernelpro ref / cand us (median)",
    "KernelBench cold / warm", "kernelpro cold / warm"]


def batch_row(record):
    cold, warm = record.get("cold", {}), record.get("warm", {})
    n = record["batch_size"]
    statuses = [r.get("status") for r in (warm.get("results") or cold.get("results") or [])]
    correct = sum(s == "correct" for s in statuses)
    return [record["name"], str(n),
            benchlib.fmt(cold.get("wall_s"), 1),
            benchlib.fmt(benchlib.ratio(cold.get("wall_s"), n), 1),
            benchlib.fmt(warm.get("wall_s"), 1),
            benchlib.fmt(benchlib.ratio(warm.get("wall_s"), n), 1),
            f"{correct}/{len(statuses)}"]


BATCH_HEADERS = ["problem", "candidates", "cold s", "cold s per candidate", "warm s",
                 "warm s per candidate", "correct"]


def render(side_records, batch_records):
    parts = []
    if side_records:
        parts.append("KernelBench eval_kernel_against_ref vs kernelpro eval, wall seconds per "
                     "evaluation (fresh process each; ratio = kernelpro / KernelBench)\n")
        parts.append(benchlib.markdown_table(SIDE_BY_SIDE_HEADERS,
                                             [side_by_side_row(r) for r in side_records]))
        stubbed = sorted({m for r in side_records for state in ("cold", "warm")
                          for m in r.get(f"kernelbench_{state}", {}).get("stubbed") or []})
        if stubbed:
            parts.append(f"\nKernelBench ran with stand-ins for modules not installed here "
                         f"(never called by an evaluation): {', '.join(stubbed)}")
    if batch_records:
        parts.append("\nkernelpro eval of a batch of candidates of one problem in one call\n")
        parts.append(benchlib.markdown_table(BATCH_HEADERS,
                                             [batch_row(r) for r in batch_records]))
    return "\n".join(parts)


def print_commands(record):
    """--dry-run: the command lines a record's evaluations would run."""
    for key, value in record.items():
        if isinstance(value, dict) and "command" in value:
            print(f"{record['name']} {key}: {shlex.join(value['command'])}")


def load_records(out, kind):
    records = []
    for path in sorted(glob.glob(os.path.join(out, kind, "*.json"))):
        with open(path) as f:
            records.append(json.load(f))
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", required=True, help="KernelBench checkout (not committed)")
    parser.add_argument("--kernelpro", default=benchlib.DEFAULT_KERNELPRO)
    parser.add_argument("--out", required=True)
    parser.add_argument("--candidates", nargs="*", default=PAIRS,
                        help=f"few-shot pairs to compare (default: {' '.join(PAIRS)})")
    parser.add_argument("--batch", help="also a kernelpro batch of copies of this pair's candidate")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--python", default=sys.executable, help="interpreter for KernelBench")
    parser.add_argument("--kernelpro-arg", action="append", default=[],
                        help="extra argument for kernelpro eval (repeatable)")
    parser.add_argument("--timeout-s", type=float, default=900)
    parser.add_argument("--dry-run", action="store_true",
                        help="find and copy the pairs, print the commands, run nothing")
    args = parser.parse_args()
    args.kernelbench = os.path.abspath(args.kernelbench)
    args.out = os.path.abspath(args.out)
    if args.batch_size < 1:
        parser.error("--batch-size must be at least 1")

    pairs = {}
    for name in args.candidates + ([args.batch] if args.batch else []):
        pair = find_pair(args.kernelbench, name)
        if pair is None:
            parser.error(f"no few-shot pair '{name}' in {args.kernelbench} "
                         f"(looked in {', '.join(PROMPT_DIRS)})")
        pairs[name] = pair

    for name in args.candidates:
        record = side_by_side(args, name, *pairs[name])
        if args.dry_run:
            print_commands(record)
            continue
        benchlib.write_json(os.path.join(args.out, "rows", f"{name}.json"), record)
    if args.batch:
        record = batch(args, args.batch, *pairs[args.batch])
        if args.dry_run:
            print_commands(record)
        else:
            benchlib.write_json(os.path.join(args.out, "batches", f"{args.batch}.json"), record)
    if args.dry_run:
        return
    side, batches = load_records(args.out, "rows"), load_records(args.out, "batches")
    table = render(side, batches)
    print(table)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table + "\n")
    benchlib.write_json(os.path.join(args.out, "results.json"), {"pairs": side, "batches": batches})


if __name__ == "__main__":
    main()
