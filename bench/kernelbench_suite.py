#!/usr/bin/env python3
"""kernelpro and KernelBench's own evaluator over the same KernelBench tasks, on one GPU.

Each task's candidate is the task's own reference (so every task should be correct at about
1.00x): the problem's source with `class Model` renamed `ModelNew` (every use of the name, as
bench/self_vs_self.py does), written to OUT/candidates/levelN/STEM.py. The shorter form, the
source with `ModelNew = Model` appended (`--candidate-form alias`), is refused by kernelpro's
static scan before anything runs: it requires a `class ModelNew` (compile_error "candidate does
not define class ModelNew"), and a subclass `class ModelNew(Model)` fails its reference_access
rule. The renamed file is one KernelBench and kernelpro both take as it is.

kernelpro (default, `--kernelpro-mode suite`): one `kernelpro suite eval --problems
KB/KernelBench --candidates OUT/candidates --tasks LIST --device cuda --torch-ops allow` process
over the tasks not done yet (a "part": its suite directory is OUT/kernelpro-suites/<hash of the
list>), as a user runs a benchmark: every candidate is built first, then the tasks run one after
the other with the referee kept warm. A task's wall seconds are the suite's own record of it
(tasks/<task>/result.json); the part's time beyond its tasks (start-up, the builds) is kept in
OUT/kernelpro-suites/<part>-part.json and counted once in the totals. The cache starts empty for
each run of this script (a scratch folder outside OUT), so no reference output is reused from an
earlier run (`--cache-dir DIR` shares one instead). `--kernelpro-mode eval` runs one `kernelpro
eval --json` process per task instead, each with an empty cache, its wall seconds measured around
the process.

KernelBench: ONE warm Python process (bench/kernelbench_eval_loop.py) imports its evaluator
once and runs `eval_kernel_against_ref` over all the tasks with the arguments
bench/kernelbench_eval_one.py passes (5 correctness trials, 100 timed calls, cuda_event). It
streams one JSON line per task (OUT/kernelbench-loop/*.jsonl); each line is merged into its row
as it comes. A task that runs past --timeout-s, or a loop process that dies inside a task,
records that task as timeout / error and a fresh loop process goes on with the rest. The
process's start-up (interpreter, torch, KernelBench's imports) is counted once, with its first
task, in the totals.

KernelBench's side runs first, then kernelpro's, one after the other on the same GPU.
Each task's row is OUT/rows/levelN/STEM.json (each side's record; a run replaces only the sides
it ran). OUT/table.md and OUT/results.json cover every row in OUT, so runs over different task
ranges into one OUT add up (`--resume` skips the sides a row already has, unless `error`).

    bench/kernelbench_suite.py --kernelbench KB --out DIR [--kernelpro BIN]
        [--tasks paper-42 | FILE | level1:1-20,level2:1-5] [--python PY] [--timeout-s 900]
        [--dry-run] [--skip-kernelbench] [--skip-kernelpro] [--resume]

Targets (issue 42): kernelpro correct on every task KernelBench finds correct; kernelpro's total
wall seconds at most 1.5x KernelBench's; no task where kernelpro's peak device memory exceeds
2 x KernelBench's + 2 GiB.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from kernelbench_side_by_side import kernelbench_status  # noqa: E402

EVAL_LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernelbench_eval_loop.py")
TASK_LISTS = os.path.join(benchlib.ROOT, "suites", "tasks")
GIB = 1024 ** 3
WALL_RATIO_TARGET = 1.5
PEAK_FACTOR, PEAK_SLACK_BYTES = 2.0, 2 * GIB
_LEVEL = re.compile(r"(?:level|l)[_-]?(\d{1,9})", re.IGNORECASE)  # as LevelOfFolder reads it
_RANGE = re.compile(r"(?:level|l)[_-]?(\d{1,9})\s*:\s*(\d{1,6})(?:\s*-\s*(\d{1,6}))?",
                    re.IGNORECASE)


# ---- tasks (pure but for reading files) ----

def read_task_list(path):
    """[(level, task)] of a task-list file ('level1: 1 6 7' a line, '#' comments), in order;
    ValueError naming the line for a malformed file (as src/suite/task_list.cc)."""
    tasks = []
    with open(path) as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        head, colon, rest = text.partition(":")
        level = _LEVEL.fullmatch(head.strip()) if colon else None
        if not level:
            raise ValueError(f"{path}:{number}: expected 'levelN: task task ...'")
        for word in rest.split():
            if not word.isdigit() or len(word) > 6:
                raise ValueError(f"{path}:{number}: '{word}' is not a task number")
            tasks.append((int(level.group(1)), int(word)))
    if not tasks:
        raise ValueError(f"{path}: lists no task")
    return tasks


def parse_ranges(spec):
    """[(level, task)] of 'level1:1-20' ranges (or single tasks 'level2:7'), comma-separated."""
    tasks = []
    for part in spec.split(","):
        m = _RANGE.fullmatch(part.strip())
        if not m:
            raise ValueError(f"--tasks {spec}: '{part.strip()}' is not a range like level1:1-20")
        level, first = int(m.group(1)), int(m.group(2))
        last = int(m.group(3)) if m.group(3) else first
        if last < first:
            raise ValueError(f"--tasks {spec}: the range {part.strip()} is empty "
                             f"({last} < {first})")
        tasks += [(level, t) for t in range(first, last + 1) if (level, t) not in tasks]
    return tasks


def parse_task_spec(spec, lists_dir=TASK_LISTS):
    """The tasks `--tasks` names: a task-list file, a list kernelpro ships (paper-42), or
    ranges; ValueError with the reason otherwise."""
    if os.path.isfile(spec):
        return read_task_list(spec)
    shipped = os.path.join(lists_dir, spec + ".txt")
    if "/" not in spec and os.path.isfile(shipped):
        return read_task_list(shipped)
    if ":" in spec:
        return parse_ranges(spec)
    raise ValueError(f"--tasks {spec}: neither a file, a list kernelpro ships (paper-42), "
                     "nor ranges like level1:1-20,level2:3")


def find_task_files(kernelbench, tasks):
    """{(level, task): path} of KB/KernelBench/levelN/T_Name.py for every listed task;
    ValueError naming every task the checkout lacks."""
    found, missing = {}, []
    for level, task in tasks:
        pattern = os.path.join(kernelbench, "KernelBench", f"level{level}", f"{task}_*.py")
        matches = sorted(p for p in glob.glob(pattern)
                         if re.match(rf"{task}_", os.path.basename(p)))
        if matches:
            found[(level, task)] = matches[0]
        else:
            missing.append(f"level{level} task {task}")
    if missing:
        raise ValueError(f"{kernelbench}/KernelBench lacks {len(missing)} of the "
                         f"{len(tasks)} tasks: {', '.join(missing)}")
    return found


def task_key(level, path):
    return f"level{level}/{os.path.splitext(os.path.basename(path))[0]}"


def candidate_source(problem_source, form="rename"):
    """The task's own Model as its candidate: `rename` (class ModelNew, every use of the name)
    or `alias` (the source with `ModelNew = Model` appended; kernelpro's scan refuses it)."""
    header = ('"""Generated by bench/kernelbench_suite.py: the reference\'s own Model as '
              'ModelNew."""\n')
    if form == "alias":
        return header + problem_source.rstrip("\n") + "\n\n\nModelNew = Model\n"
    return header + re.sub(r"\bModel\b", "ModelNew", problem_source)


def write_candidate(out, key, problem, form="rename"):
    path = os.path.join(out, "candidates", key + ".py")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(problem) as f:
        source = f.read()
    with open(path, "w") as f:
        f.write(candidate_source(source, form))
    return path


# ---- rows (pure: records in, numbers and Markdown out) ----

def kernelpro_peak_bytes(result):
    """kernelpro's processes together, at most: the referee's largest step peak plus the
    candidate's (each what torch's allocator reserved in that process), or None."""
    peaks = (result or {}).get("peak_device_bytes") or {}
    sides = [[v for v in (peaks.get(side) or {}).values() if isinstance(v, (int, float))]
             for side in ("referee", "candidate")]
    return sum(max(v) for v in sides if v) if any(sides) else None


def kernelbench_record_status(record):
    if record.get("timed_out"):
        return "timeout"
    return kernelbench_status(record)


def summarize(row):
    """A row's numbers: status, wall, phases, peak and speedup on each side (None: not run)."""
    kp_run, kb = row.get("kernelpro"), row.get("kernelbench")
    s = {"task": row["task"], "kp_status": None, "kb_status": None}
    if kp_run is not None:
        results = kp_run.get("results") or []
        result = results[0] if results else {}
        code = kp_run.get("exit_code")
        phases = result.get("phase_seconds") or {}
        s.update(kp_status=result.get("status") or ("timeout" if code == 124 else "error"),
                 kp_wall_s=kp_run.get("wall_s"), kp_speedup=result.get("speedup"),
                 kp_part=kp_run.get("part"), kp_part_overhead_s=kp_run.get("part_overhead_s"),
                 kp_peak_bytes=kernelpro_peak_bytes(result),
                 kp_reference_s=phases.get("reference"), kp_check_s=phases.get("check"),
                 kp_time_s=phases.get("time"))
    if kb is not None:
        s.update(kb_status=kernelbench_record_status(kb), kb_wall_s=kb.get("wall_s"),
                 kb_startup_s=kb.get("startup_s") or 0.0, kb_speedup=kb.get("speedup"),
                 kb_peak_bytes=kb.get("peak_reserved_bytes"))
    s["peak_over"] = peak_over(s.get("kp_peak_bytes"), s.get("kb_peak_bytes"))
    s["kp_reason"], s["kb_reason"] = failure_reasons(row)
    return s


def failure_reasons(row):
    """Why a side is not correct, in one line each (None when it is, or did not run)."""
    kp_run, kb = row.get("kernelpro"), row.get("kernelbench")
    kp_reason = kb_reason = None
    if kp_run is not None:
        result = (kp_run.get("results") or [{}])[0]
        if result.get("status") != "correct":
            tail = (kp_run.get("stderr_tail") or "").strip().splitlines()
            kp_reason = (result.get("message") or result.get("error")
                         or (tail[-1] if tail else f"exit {kp_run.get('exit_code')}"))
    if kb is not None and kernelbench_record_status(kb) != "correct":
        meta = kb.get("metadata") or {}
        kb_reason = (kb.get("error") or meta.get("runtime_error") or meta.get("compilation_error")
                     or meta.get("correctness_issue") or kernelbench_record_status(kb))
    return kp_reason, kb_reason


def peak_over(kp_bytes, kb_bytes):
    """kernelpro's peak above 2 x KernelBench's + 2 GiB (False when either is unknown)."""
    if kp_bytes is None or kb_bytes is None:
        return False
    return kp_bytes > PEAK_FACTOR * kb_bytes + PEAK_SLACK_BYTES


def _gib(value):
    return None if value is None else value / GIB


def table_row(s):
    def pair(a, b):
        return f"{a} / {b}"
    return [s["task"],
            pair(s["kp_status"] or "–", s["kb_status"] or "–"),
            pair(benchlib.fmt(s.get("kp_wall_s"), 1), benchlib.fmt(s.get("kb_wall_s"), 1)),
            " / ".join(benchlib.fmt(s.get(k), 1)
                       for k in ("kp_reference_s", "kp_check_s", "kp_time_s")),
            pair(benchlib.fmt(_gib(s.get("kp_peak_bytes")), 2) + (" (over)" if s["peak_over"]
                                                                   else ""),
                 benchlib.fmt(_gib(s.get("kb_peak_bytes")), 2)),
            pair(benchlib.fmt(s.get("kp_speedup"), 2, "x"),
                 benchlib.fmt(s.get("kb_speedup"), 2, "x"))]


HEADERS = ["task", "status kernelpro / KernelBench", "wall s kernelpro / KernelBench",
           "kernelpro s reference / check / time", "peak GiB kernelpro / KernelBench",
           "speedup kernelpro / KernelBench"]


def totals(summaries):
    both = [s for s in summaries if s.get("kp_wall_s") is not None
            and s.get("kb_wall_s") is not None]
    # A suite part's own time (start-up, builds first) counts once for the part, beside its
    # tasks' seconds.
    parts = {s["kp_part"]: s["kp_part_overhead_s"] for s in both if s.get("kp_part")}
    kp_wall = sum(s["kp_wall_s"] for s in both) + sum(v or 0.0 for v in parts.values())
    kb_wall = sum(s["kb_wall_s"] + s["kb_startup_s"] for s in both)
    kb_correct = [s for s in summaries if s["kb_status"] == "correct"]
    return {
        "tasks": len(summaries),
        "kernelpro_correct": sum(s["kp_status"] == "correct" for s in summaries),
        "kernelbench_correct": len(kb_correct),
        "kernelpro_correct_where_kernelbench_correct":
            sum(s["kp_status"] == "correct" for s in kb_correct),
        "kernelpro_not_correct_where_kernelbench_correct":
            [s["task"] for s in kb_correct if s["kp_status"] != "correct"],
        "tasks_with_both_walls": len(both),
        "kernelpro_wall_s": kp_wall,
        "kernelpro_suite_overhead_s": sum(v or 0.0 for v in parts.values()),
        "kernelbench_wall_s": kb_wall,
        "kernelbench_startup_s": sum(s["kb_startup_s"] for s in both),
        "wall_ratio": benchlib.ratio(kp_wall, kb_wall),
        "peak_over": [s["task"] for s in summaries if s["peak_over"]],
        "peak_unknown": [s["task"] for s in summaries
                         if s.get("kp_peak_bytes") is None or s.get("kb_peak_bytes") is None],
    }


def _met(ok):
    return "met" if ok else "NOT met"


def render_totals(t):
    ratio = t["wall_ratio"]
    missed = t["kernelpro_not_correct_where_kernelbench_correct"]
    lines = [
        f"tasks: {t['tasks']}",
        f"correct: kernelpro {t['kernelpro_correct']}, KernelBench {t['kernelbench_correct']}",
        f"kernelpro correct where KernelBench is correct: "
        f"{t['kernelpro_correct_where_kernelbench_correct']}/{t['kernelbench_correct']} "
        f"(target: all; {_met(not missed)})" + (f": not {', '.join(missed)}" if missed else ""),
        f"wall seconds over the {t['tasks_with_both_walls']} tasks with both sides: kernelpro "
        f"{t['kernelpro_wall_s']:.1f} (its suite start-up and builds "
        f"{t.get('kernelpro_suite_overhead_s', 0.0):.1f} included), KernelBench {t['kernelbench_wall_s']:.1f} (its process "
        f"start-up {t['kernelbench_startup_s']:.1f} included), ratio "
        f"{benchlib.fmt(ratio, 2, 'x')} (target <= {WALL_RATIO_TARGET}x; "
        f"{_met(ratio is not None and ratio <= WALL_RATIO_TARGET)})",
        f"kernelpro peak > {PEAK_FACTOR:g} x KernelBench's + {PEAK_SLACK_BYTES // GIB} GiB: "
        f"{', '.join(t['peak_over']) or 'none'} (target: none; {_met(not t['peak_over'])})"]
    if t["peak_unknown"]:
        lines.append(f"peak unknown on a side (not checked): {', '.join(t['peak_unknown'])}")
    return lines


def render_failures(summaries):
    """One line per side that is not correct: the task, the side, the first 160 characters
    of its reason."""
    lines = []
    for s in summaries:
        for side, key in (("kernelpro", "kp_reason"), ("KernelBench", "kb_reason")):
            if s.get(key):
                reason = " ".join(str(s[key]).split())
                lines.append(f"- {s['task']}, {side}: {reason[:160]}")
    return lines


def _task_order(row):
    m = re.match(r"level(\d+)/(\d+)_", row["task"])
    return (int(m.group(1)), int(m.group(2))) if m else (1 << 30, 0)


def render(rows):
    """The table and the totals over `rows`; also returns the totals."""
    summaries = [summarize(r) for r in sorted(rows, key=_task_order)]
    t = totals(summaries)
    modes = sorted({"suite eval (one process per part)" if (r.get("kernelpro") or {}).get("part")
                    else "eval (one process per task)" for r in rows if r.get("kernelpro")})
    text = (f"kernelpro {' + '.join(modes) or 'not run'} vs KernelBench eval_kernel_against_ref "
            "(one warm process), each task's own Model as its candidate\n\n"
            + benchlib.markdown_table(HEADERS, [table_row(s) for s in summaries])
            + "\n\n" + "\n".join(render_totals(t)))
    failures = render_failures(summaries)
    if failures:
        text += "\n\nNot correct:\n" + "\n".join(failures)
    stubbed = sorted({m for r in rows for m in (r.get("kernelbench") or {}).get("stubbed") or []})
    if stubbed:
        text += (f"\n\nKernelBench ran with stand-ins for modules not installed here (never called "
                 f"by an evaluation): {', '.join(stubbed)}")
    return text, t


def row_path(out, key):
    return os.path.join(out, "rows", key + ".json")


def load_rows(out):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "rows", "*", "*.json"))):
        with open(path) as f:
            rows.append(json.load(f))
    return rows


def update_row(out, key, base, side, record):
    """Writes `record` as the row's `side`, keeping the other side's record."""
    path = row_path(out, key)
    row = dict(base)
    if os.path.exists(path):
        with open(path) as f:
            row = {**json.load(f), **base}
    row[side] = record
    benchlib.write_json(path, row)
    return row


def has_side(out, key, side):
    """Whether the row has a result of `side` (`--resume` skips it); an `error` (the side could
    not run the task: no GPU, no evaluator, a crash) is not one, so it is run again."""
    path = row_path(out, key)
    if not os.path.exists(path):
        return False
    with open(path) as f:
        row = json.load(f)
    if row.get(side) is None:
        return False
    s = summarize(row)
    return s["kp_status" if side == "kernelpro" else "kb_status"] != "error"


# ---- running ----

def kernelpro_side(args, tasks):
    """One `kernelpro eval` process per task; each row's kernelpro record written as it ends."""
    for t in tasks:
        if args.resume and has_side(args.out, t["task"], "kernelpro"):
            print(f"{t['task']}: kernelpro done earlier, skipped", flush=True)
            continue
        cache = args.cache_dir or os.path.join(args.scratch, "kernelpro-cache")
        command = benchlib.kernelpro_command(
            args.kernelpro, t["problem"], [t["candidate"]], cache_dir=cache,
            extra=["--torch-ops", "allow"] + args.kernelpro_arg)
        if args.dry_run:
            print(f"{t['task']} kernelpro: {shlex.join(command)}")
            continue
        if not args.cache_dir:
            shutil.rmtree(cache, ignore_errors=True)  # cold: no reference output reused
        run = benchlib.run_kernelpro(command, timeout_s=args.timeout_s).to_json()
        row = update_row(args.out, t["task"], base_row(t), "kernelpro", run)
        s = summarize(row)
        print(f"{t['task']}: kernelpro {s['kp_status']} in {s['kp_wall_s']:.1f} s", flush=True)


def task_list_text(tasks):
    """The suite's task-list file ('level1: 7 11' a line) for `tasks`."""
    by_level = {}
    for t in tasks:
        by_level.setdefault(t["level"], []).append(t["number"])
    return "".join(f"level{level}: {' '.join(str(n) for n in sorted(numbers))}\n"
                   for level, numbers in sorted(by_level.items()))


def suite_record(suite_dir, key, part, command, code, overhead_s):
    """The kernelpro record of task `key` from the suite's directory: its verdict and the task's
    own wall seconds (the suite's result.json); None when the suite never finished it."""
    task_dir = os.path.join(suite_dir, "tasks", key)
    try:
        with open(os.path.join(task_dir, "result.json")) as f:
            result = json.load(f)
    except (OSError, ValueError):
        return None
    verdicts = []
    for path in sorted(glob.glob(os.path.join(task_dir, "candidates", "*.json"))):
        with open(path) as f:
            verdicts.append(json.load(f))
    if not verdicts:
        verdicts = [{"status": result.get("status") or "error",
                     "message": result.get("message") or "no verdict recorded"}]
    return {"command": command, "wall_s": result.get("seconds"), "exit_code": code,
            "results": verdicts, "part": part, "part_overhead_s": overhead_s,
            "stderr_tail": ""}


def kernelpro_suite_side(args, tasks):
    """`kernelpro suite eval` over the tasks not done yet (one part: one suite directory, one
    process that builds every candidate first and keeps its referee warm across tasks); each
    row's kernelpro record is the task's verdict and its own wall seconds, and the part's time
    beyond its tasks' (start-up, builds) is kept with it."""
    todo = [t for t in tasks if not (args.resume and has_side(args.out, t["task"], "kernelpro"))]
    for t in tasks:
        if t not in todo:
            print(f"{t['task']}: kernelpro done earlier, skipped", flush=True)
    if not todo:
        return
    listing = task_list_text(todo)
    part = hashlib.sha256(listing.encode()).hexdigest()[:10]
    suites = os.path.join(args.out, "kernelpro-suites")
    os.makedirs(suites, exist_ok=True)
    suite_dir = os.path.join(suites, part)
    list_file = suite_dir + "-tasks.txt"
    with open(list_file, "w") as f:
        f.write(listing)
    cache = args.cache_dir or os.path.join(args.scratch, "kernelpro-cache")
    command = [args.kernelpro, "suite", "eval", "--problems",
               os.path.join(args.kernelbench, "KernelBench"), "--candidates",
               os.path.join(args.out, "candidates"), "--tasks", list_file, "--dir", suite_dir,
               "--device", "cuda", "--torch-ops", "allow", "--cache-dir", cache] + \
        args.kernelpro_arg
    if args.dry_run:
        print(f"kernelpro suite over {len(todo)} tasks: {shlex.join(command)}")
        return
    run = benchlib.run_kernelpro(command, timeout_s=args.timeout_s * len(todo))
    records = {t["task"]: suite_record(suite_dir, t["task"], part, command, run.exit_code, None)
               for t in todo}
    busy = sum(r["wall_s"] or 0.0 for r in records.values() if r)
    overhead = max(0.0, run.wall_s - busy)
    benchlib.write_json(suite_dir + "-part.json", {
        "tasks": [t["task"] for t in todo], "wall_s": run.wall_s, "tasks_s": busy,
        "overhead_s": overhead, "exit_code": run.exit_code, "stderr_tail": run.stderr_tail})
    for t in todo:
        record = records[t["task"]]
        if record is None:
            record = {"command": command, "wall_s": None, "exit_code": run.exit_code,
                      "results": [], "part": part, "stderr_tail": run.stderr_tail}
        record["part_overhead_s"] = overhead
        row = update_row(args.out, t["task"], base_row(t), "kernelpro", record)
        s = summarize(row)
        print(f"{t['task']}: kernelpro {s['kp_status']} in {benchlib.fmt(s['kp_wall_s'], 1)} s",
              flush=True)
    print(f"kernelpro suite part {part}: {run.wall_s:.1f} s, of which {overhead:.1f} s beyond "
          "its tasks (start-up, builds)", flush=True)


def base_row(t):
    return {k: t[k] for k in ("task", "level", "number", "problem", "candidate")}


def read_records(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return benchlib.parse_json_lines(f.read())


def watch_loop(command, jsonl, log, env, timeout_s, on_record):
    """Runs one loop process, handing each record to on_record(record, loop) as it lands;
    kills it when no record came for `timeout_s`. Returns (exit code, timed out, loop record,
    seconds since the last record, task records seen)."""
    with open(log, "w") as log_file:
        proc = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=env)
        seen, loop, tasks_seen, timed_out = 0, {}, 0, False
        last = time.perf_counter()
        while True:
            code = proc.poll()
            records = read_records(jsonl)
            for record in records[seen:]:
                last = time.perf_counter()
                if "loop" in record:
                    loop = record["loop"]
                else:
                    tasks_seen += 1
                    on_record(record, loop)
            seen = len(records)
            if code is not None:
                return code, timed_out, loop, time.perf_counter() - last, tasks_seen
            if time.perf_counter() - last > timeout_s:
                proc.kill()  # the process this function started, by its id
                proc.wait()
                timed_out = True
                continue
            time.sleep(0.5)


def fresh_stem(folder, run_id):
    """FOLDER/RUN_ID-N, the first N no earlier loop process of this OUT used."""
    n = 1
    while glob.glob(os.path.join(folder, f"{run_id}-{n}[.-]*")):
        n += 1
    return os.path.join(folder, f"{run_id}-{n}")


def kernelbench_side(args, tasks):
    """KernelBench's evaluator over every task in one warm process (a fresh one goes on after
    a task that hangs or kills it); each row's kernelbench record written as it lands."""
    todo = [t for t in tasks if not (args.resume and has_side(args.out, t["task"], "kernelbench"))]
    for t in tasks:
        if t not in todo:
            print(f"{t['task']}: KernelBench done earlier, skipped", flush=True)
    by_key = {t["task"]: t for t in todo}
    loop_dir = os.path.join(args.out, "kernelbench-loop")
    os.makedirs(loop_dir, exist_ok=True)
    build_dir = os.path.join(args.scratch, "kernelbench-build")
    os.makedirs(build_dir, exist_ok=True)
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=build_dir)
    run_id = time.strftime("%Y%m%d-%H%M%S")

    def on_record(record, loop):
        t = by_key.get(record.get("task"))
        if t is None:
            return
        record.update(status=kernelbench_record_status(record), stubbed=loop.get("stubbed"),
                      gpu=loop.get("gpu"))
        update_row(args.out, t["task"], base_row(t), "kernelbench", record)
        print(f"{t['task']}: KernelBench {record['status']} in "
              f"{benchlib.fmt(record.get('wall_s'), 1)} s", flush=True)

    for _ in range(len(todo)):
        if not todo:
            break
        stem = fresh_stem(loop_dir, run_id)
        benchlib.write_json(stem + "-tasks.json", [
            {"task": t["task"], "problem": t["problem"], "candidate": t["candidate"]}
            for t in todo])
        command = [args.python, EVAL_LOOP, "--kernelbench", args.kernelbench,
                   "--tasks-file", stem + "-tasks.json", "--jsonl", stem + ".jsonl",
                   "--build-dir", build_dir]
        if args.dry_run:
            print(f"KernelBench loop over {len(todo)} tasks: {shlex.join(command)}")
            return
        code, timed_out, loop, idle_s, seen = watch_loop(
            command, stem + ".jsonl", stem + ".log", env, args.timeout_s, on_record)
        done = {r.get("task") for r in read_records(stem + ".jsonl")}
        todo = [t for t in todo if t["task"] not in done]
        if not todo:
            break
        if loop.get("error") or not loop:  # no evaluator: no task of this run can run
            for t in todo:
                on_record({"task": t["task"], "error": loop.get("error") or
                           f"the loop process exited ({code}) before importing KernelBench; "
                           f"see {stem}.log", "wall_s": None}, loop)
            return
        stuck = todo.pop(0)
        reason = (f"timed out after {args.timeout_s:g} s" if timed_out else
                  f"the loop process exited ({code}) during this task; see {stem}.log")
        on_record({"task": stuck["task"], "error": reason, "timed_out": timed_out,
                   "wall_s": idle_s, "startup_s": 0.0 if seen else loop.get("import_s")}, loop)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", required=True, help="KernelBench checkout (not committed)")
    parser.add_argument("--kernelpro", default=benchlib.DEFAULT_KERNELPRO)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tasks", default="paper-42",
                        help="paper-42 (suites/tasks/paper-42.txt), a task-list file "
                             "('level1: 1 6 7' a line), or ranges: level1:1-20,level2:3-9")
    parser.add_argument("--python", default=sys.executable, help="interpreter for KernelBench")
    parser.add_argument("--timeout-s", type=float, default=900, help="per task, each side")
    parser.add_argument("--candidate-form", choices=["rename", "alias"], default="rename",
                        help="rename: class ModelNew (default); alias: `ModelNew = Model` "
                             "appended (kernelpro's scan refuses it)")
    parser.add_argument("--cache-dir", help="one kernelpro cache for every task (default: a "
                        "fresh one per task, so no reference output is reused)")
    parser.add_argument("--kernelpro-arg", action="append", default=[],
                        help="extra argument for kernelpro eval (repeatable)")
    parser.add_argument("--kernelpro-mode", choices=["suite", "eval"], default="suite",
                        help="suite: one `kernelpro suite eval` over the tasks (builds first, "
                             "one warm referee; default); eval: one `kernelpro eval` process "
                             "per task")
    parser.add_argument("--resume", action="store_true",
                        help="skip each side a task's row in OUT already has (not an error)")
    parser.add_argument("--skip-kernelbench", action="store_true")
    parser.add_argument("--skip-kernelpro", action="store_true")
    parser.add_argument("--dry-run", action="store_true",
                        help="write the candidates, print the commands, run nothing")
    args = parser.parse_args()
    args.kernelbench = os.path.abspath(args.kernelbench)
    args.out = os.path.abspath(args.out)
    try:
        files = find_task_files(args.kernelbench, parse_task_spec(args.tasks))
    except (ValueError, OSError) as e:
        parser.error(str(e))
    if not (args.dry_run or args.skip_kernelpro or os.access(args.kernelpro, os.X_OK)):
        parser.error(f"--kernelpro {args.kernelpro}: not an executable (build it, or "
                     "--skip-kernelpro)")
    tasks = []
    for (level, number), problem in files.items():
        key = task_key(level, problem)
        tasks.append({"task": key, "level": level, "number": number, "problem": problem,
                      "candidate": write_candidate(args.out, key, problem, args.candidate_form)})
    args.scratch = tempfile.mkdtemp(prefix="kernelbench-suite-")  # caches, builds: not in OUT
    try:
        if not args.skip_kernelbench:
            kernelbench_side(args, tasks)
        if not args.skip_kernelpro:
            if args.kernelpro_mode == "suite":
                kernelpro_suite_side(args, tasks)
            else:
                kernelpro_side(args, tasks)
    finally:
        shutil.rmtree(args.scratch, ignore_errors=True)
    if args.dry_run:
        return
    rows = load_rows(args.out)
    table, t = render(rows)
    print(table)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table + "\n")
    benchlib.write_json(os.path.join(args.out, "results.json"),
                        {"totals": t, "tasks": [summarize(r) for r in rows], "rows": rows})


if __name__ == "__main__":
    main()
