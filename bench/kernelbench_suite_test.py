import json
import os
import re
import sys
import types

import pytest

import kernelbench_eval_loop
import kernelbench_suite as suite

GIB = 1024 ** 3
PROBLEM = '''class Model:
    def __init__(self, scale):
        super(Model, self).__init__()
        self.scale = scale

    def forward(self, x):
        return x * self.scale


def get_inputs():
    return [3]


def get_init_inputs():
    return [2]
'''


def make_kernelbench(root, files):
    """A fake checkout: KB/KernelBench/levelN/T_Name.py for each 'levelN/T_Name' given."""
    for key in files:
        path = os.path.join(root, "KernelBench", key + ".py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(PROBLEM)
    return str(root)


# ---- task lists ----

def test_the_papers_list_is_read_from_suites_tasks():
    tasks = suite.parse_task_spec("paper-42")
    assert len(tasks) == 42
    assert [sum(level == n for level, _ in tasks) for n in (1, 2, 3)] == [19, 16, 7]
    assert tasks[0] == (1, 1) and tasks[18] == (1, 97) and tasks[-1] == (3, 50)


def test_ranges_and_single_tasks_comma_separated():
    assert suite.parse_task_spec("level1:1-3, level2:7,L3:28-29") == [
        (1, 1), (1, 2), (1, 3), (2, 7), (3, 28), (3, 29)]
    assert suite.parse_ranges("level1:2-3,level1:3-4") == [(1, 2), (1, 3), (1, 4)]


def test_a_task_list_file_of_ones_own(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("# mine\nlevel2: 3 9  # two\n\nL3: 28\n")
    assert suite.parse_task_spec(str(path)) == [(2, 3), (2, 9), (3, 28)]


@pytest.mark.parametrize("spec, message", [
    ("paper-43", "neither a file, a list kernelpro ships (paper-42), nor ranges"),
    ("level1:5-2", "the range level1:5-2 is empty (2 < 5)"),
    ("level1:1-3,levelx:4", "'levelx:4' is not a range like level1:1-20"),
    ("level1:", "'level1:' is not a range"),
])
def test_bad_task_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        suite.parse_task_spec(spec)


def test_a_malformed_task_list_file_names_its_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("level1: 1 two\n")
    with pytest.raises(ValueError, match="bad.txt:1: 'two' is not a task number"):
        suite.parse_task_spec(str(bad))
    nolevel = tmp_path / "nolevel.txt"
    nolevel.write_text("# c\n1 2 3\n")
    with pytest.raises(ValueError, match=r"nolevel.txt:2: expected 'levelN: task task \.\.\.'"):
        suite.parse_task_spec(str(nolevel))
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(ValueError, match="lists no task"):
        suite.parse_task_spec(str(empty))


# ---- task files and candidates ----

def test_task_files_are_found_by_number_in_a_kernelbench_tree(tmp_path):
    kb = make_kernelbench(tmp_path, ["level1/1_Square", "level1/10_Ten", "level1/12_Twelve",
                                     "level2/3_Conv"])
    found = suite.find_task_files(kb, [(2, 3), (1, 1), (1, 10)])
    assert list(found) == [(2, 3), (1, 1), (1, 10)]
    assert found[(1, 1)].endswith("KernelBench/level1/1_Square.py")
    assert found[(1, 10)].endswith("KernelBench/level1/10_Ten.py")
    assert suite.task_key(1, found[(1, 10)]) == "level1/10_Ten"
    with pytest.raises(ValueError, match="lacks 2 of the 3 tasks: level1 task 2, level3 task 1"):
        suite.find_task_files(kb, [(1, 1), (1, 2), (3, 1)])


def test_the_candidate_is_the_tasks_own_model_as_model_new(tmp_path):
    kb = make_kernelbench(tmp_path / "kb", ["level1/1_Square"])
    problem = os.path.join(kb, "KernelBench", "level1", "1_Square.py")
    path = suite.write_candidate(str(tmp_path / "out"), "level1/1_Square", problem)
    assert path == str(tmp_path / "out" / "candidates" / "level1" / "1_Square.py")
    source = open(path).read()
    assert "class ModelNew:" in source and "super(ModelNew, self)" in source
    assert "Model(" not in source.replace("ModelNew(", "")
    scope = {}
    exec(source, scope)
    assert scope["ModelNew"](*scope["get_init_inputs"]()).forward(*scope["get_inputs"]()) == 6


def test_the_alias_form_appends_model_new_equals_model():
    source = suite.candidate_source(PROBLEM, "alias")
    assert source.endswith("\n\n\nModelNew = Model\n")
    scope = {}
    exec(source, scope)
    assert scope["ModelNew"] is scope["Model"]


# ---- rows, totals, tables ----

def kernelpro_run(status="correct", wall=20.0, peaks=(3 * GIB, 2 * GIB), speedup=1.01):
    result = {"status": status, "speedup": speedup, "message": "" if status == "correct"
              else "output differs", "reference_ms": 1.0, "candidate_ms": 0.99,
              "phase_seconds": {"scan": 0.1, "reference": 4.0, "build": 0.0, "load": 0.5,
                                "check": 3.0, "time": 10.0, "total": 19.0},
              "peak_device_bytes": {"referee": {"reference": peaks[0], "verify": 1},
                                    "candidate": {"check": peaks[1], "time": peaks[1]},
                                    "min_free_bytes": 70 * GIB, "total_bytes": 80 * GIB}}
    return {"command": ["kernelpro"], "wall_s": wall, "exit_code": 0, "results": [result],
            "stderr_tail": ""}


def kernelbench_record(task, status="correct", wall=5.0, peak=2 * GIB, startup=0.0):
    record = {"task": task, "compiled": status != "compile_error",
              "correctness": status == "correct", "runtime_ms": 1.0, "ref_runtime_ms": 0.98,
              "speedup": 0.98, "wall_s": wall, "peak_reserved_bytes": peak, "metadata": {}}
    if startup:
        record["startup_s"] = startup
    return record


def row(task, kp=None, kb=None):
    return {"task": task, "kernelpro": kp, "kernelbench": kb}


def test_a_row_gives_statuses_walls_phases_peaks_and_speedups():
    s = suite.summarize(row("level1/1_Square", kernelpro_run(),
                            kernelbench_record("level1/1_Square")))
    # The referee's largest step plus the candidate's: the processes together, at most.
    assert s["kp_peak_bytes"] == 5 * GIB
    assert not s["peak_over"]  # 5 GiB <= 2 x 2 GiB + 2 GiB
    assert suite.table_row(s) == ["level1/1_Square", "correct / correct", "20.0 / 5.0",
                                  "4.0 / 3.0 / 10.0", "5.00 / 2.00", "1.01x / 0.98x"]


def test_a_peak_over_twice_kernelbenchs_plus_two_gib_is_flagged():
    s = suite.summarize(row("level2/3_Conv", kernelpro_run(peaks=(10 * GIB, GIB)),
                            kernelbench_record("level2/3_Conv", peak=3 * GIB)))
    assert s["peak_over"]  # 10 + 1 GiB > 2 x 3 GiB + 2 GiB
    assert suite.table_row(s)[4] == "11.00 (over) / 3.00"
    assert not suite.peak_over(8 * GIB, 3 * GIB) and suite.peak_over(8 * GIB + 1, 3 * GIB)
    assert not suite.peak_over(None, 3 * GIB)


def test_failures_timeouts_and_missing_sides_show_as_statuses():
    timed_out = {"task": "t", "error": "timed out after 900 s", "timed_out": True,
                 "wall_s": 900.0}
    s = suite.summarize(row("level1/2_X", None, timed_out))
    assert s["kb_status"] == "timeout" and s["kp_status"] is None
    assert suite.table_row(s)[1:3] == ["– / timeout", "– / 900.0"]
    crashed = {"command": [], "wall_s": 3.0, "exit_code": 2,
               "results": [{"error": "no GPU", "status": None}], "stderr_tail": ""}
    s = suite.summarize(row("level1/3_Y", crashed, kernelbench_record("t", "compile_error")))
    assert (s["kp_status"], s["kb_status"]) == ("error", "compile_error")
    assert s["kp_reason"] == "no GPU" and s["kb_reason"] == "compile_error"
    assert suite.summarize(row("a", {"wall_s": 900.0, "exit_code": 124}))["kp_status"] == \
        "timeout"


def test_totals_count_correct_sides_walls_with_start_up_and_peak_violations():
    rows = [row("level1/1_A", kernelpro_run(wall=20.0),
                kernelbench_record("a", wall=10.0, startup=15.0)),
            row("level1/2_B", kernelpro_run("incorrect", wall=30.0),
                kernelbench_record("b", wall=5.0)),
            row("level2/1_C", kernelpro_run(wall=10.0, peaks=(9 * GIB, 0)),
                kernelbench_record("c", "incorrect", wall=5.0, peak=GIB)),
            row("level3/1_D", kernelpro_run(wall=99.0), None)]
    text, t = suite.render(rows)
    assert t["tasks"] == 4 and t["kernelpro_correct"] == 3 and t["kernelbench_correct"] == 2
    assert t["kernelpro_correct_where_kernelbench_correct"] == 1
    assert t["kernelpro_not_correct_where_kernelbench_correct"] == ["level1/2_B"]
    assert t["tasks_with_both_walls"] == 3
    assert t["kernelpro_wall_s"] == 60.0 and t["kernelbench_wall_s"] == 35.0
    assert t["wall_ratio"] == pytest.approx(60 / 35)
    assert t["peak_over"] == ["level2/1_C"] and t["peak_unknown"] == ["level3/1_D"]
    assert "kernelpro correct where KernelBench is correct: 1/2 (target: all; NOT met): " \
        "not level1/2_B" in text
    assert "ratio 1.71x (target <= 1.5x; NOT met)" in text
    assert "start-up 15.0 included" in text
    assert "2 GiB: level2/1_C (target: none; NOT met)" in text
    assert "- level1/2_B, kernelpro: output differs" in text
    assert "- level2/1_C, KernelBench: incorrect" in text


def test_rows_of_two_runs_into_one_out_add_up(tmp_path):
    out = str(tmp_path)
    base_a = {"task": "level1/1_A", "level": 1, "number": 1}
    base_b = {"task": "level2/3_B", "level": 2, "number": 3}
    # run 1: level1 only, both sides
    suite.update_row(out, "level1/1_A", base_a, "kernelbench", kernelbench_record("a"))
    suite.update_row(out, "level1/1_A", base_a, "kernelpro", kernelpro_run(wall=8.0))
    # run 2: another range, then level1 again with --skip-kernelbench
    suite.update_row(out, "level2/3_B", base_b, "kernelbench", kernelbench_record("b"))
    suite.update_row(out, "level2/3_B", base_b, "kernelpro", kernelpro_run(wall=4.0))
    suite.update_row(out, "level1/1_A", base_a, "kernelpro", kernelpro_run(wall=6.0))
    rows = suite.load_rows(out)
    assert [r["task"] for r in rows] == ["level1/1_A", "level2/3_B"]
    assert rows[0]["kernelbench"]["task"] == "a"  # the side run 2 did not run is kept
    assert suite.has_side(out, "level2/3_B", "kernelpro")
    assert not suite.has_side(out, "level3/1_C", "kernelpro")
    suite.update_row(out, "level2/3_B", base_b, "kernelbench", {"error": "no GPU"})
    assert not suite.has_side(out, "level2/3_B", "kernelbench")  # --resume runs it again
    _, t = suite.render(rows)
    assert t["tasks"] == 2 and t["kernelpro_wall_s"] == 6.0 + 4.0


# ---- the runs, without a GPU ----

FAKE_LOOP = r'''
import argparse, json, os, sys, time
p = argparse.ArgumentParser()
for a in ("--kernelbench", "--tasks-file", "--jsonl", "--build-dir"):
    p.add_argument(a)
a = p.parse_args()
tasks = json.load(open(a.tasks_file))
with open(a.jsonl, "a") as out:
    out.write(json.dumps({"loop": {"stubbed": ["openai"], "import_s": 0.5}}) + "\n")
    out.flush()
    for i, t in enumerate(tasks):
        if "Hang" in t["task"]:
            time.sleep(60)
        if "Crash" in t["task"]:
            os._exit(3)
        record = {"task": t["task"], "compiled": True, "correctness": True, "wall_s": 0.1,
                  "runtime_ms": 1.0, "ref_runtime_ms": 1.0, "speedup": 1.0,
                  "peak_reserved_bytes": 1024}
        if i == 0:
            record["startup_s"] = 0.5
        out.write(json.dumps(record) + "\n")
        out.flush()
'''


def test_the_kernelbench_loop_goes_on_after_a_hang_and_a_crash(tmp_path, monkeypatch):
    fake = tmp_path / "fake_loop.py"
    fake.write_text(FAKE_LOOP)
    monkeypatch.setattr(suite, "EVAL_LOOP", str(fake))
    keys = ["level1/1_A", "level1/2_Hang", "level1/3_B", "level1/4_Crash", "level1/5_C"]
    tasks = [{"task": k, "level": 1, "number": i + 1, "problem": "p.py", "candidate": "c.py"}
             for i, k in enumerate(keys)]
    out = tmp_path / "out"
    args = types.SimpleNamespace(out=str(out), scratch=str(tmp_path / "scratch"), resume=False,
                                 dry_run=False, python=sys.executable, kernelbench="kb",
                                 timeout_s=1.0)
    suite.kernelbench_side(args, tasks)
    rows = {r["task"]: suite.summarize(r) for r in suite.load_rows(str(out))}
    assert [rows[k]["kb_status"] for k in keys] == ["correct", "timeout", "correct", "error",
                                                    "correct"]
    assert "exited (3) during this task" in rows["level1/4_Crash"]["kb_reason"]
    assert rows["level1/3_B"]["kb_startup_s"] == 0.5  # first task of the second process
    assert len(list((out / "kernelbench-loop").glob("*.jsonl"))) == 3
    args.resume = True  # only the task whose record is an error runs again
    monkeypatch.setattr(suite, "EVAL_LOOP", str(tmp_path / "missing_loop.py"))
    suite.kernelbench_side(args, tasks)
    rows = {r["task"]: suite.summarize(r) for r in suite.load_rows(str(out))}
    assert "before importing KernelBench" in rows["level1/4_Crash"]["kb_reason"]
    assert rows["level1/2_Hang"]["kb_status"] == "timeout"
    assert len(list((out / "kernelbench-loop").glob("*-tasks.json"))) == 4


def test_kernelbenchs_own_peak_reset_does_not_lose_the_tasks_peak():
    class FakeCuda:
        def __init__(self):
            self.peak = 0

        def reset_peak_memory_stats(self, device=None):
            self.peak = 0

        def max_memory_reserved(self, device=None):
            return self.peak

        def empty_cache(self):
            pass

    torch = types.SimpleNamespace(cuda=FakeCuda())
    watch = kernelbench_eval_loop.PeakWatch(torch)
    watch.install()
    watch.start()
    torch.cuda.peak = 5 * GIB          # the task's work
    torch.cuda.reset_peak_memory_stats(device="cuda:0")  # KernelBench's clean-up
    torch.cuda.peak = GIB
    assert watch.peak() == 5 * GIB
    watch.start()
    assert watch.peak() == 0


def test_a_dry_run_writes_the_candidates_and_runs_nothing(tmp_path, monkeypatch, capsys):
    kb = make_kernelbench(tmp_path / "kb", ["level1/1_A", "level1/2_B", "level2/1_C"])
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["kernelbench_suite.py", "--kernelbench", kb, "--out",
                                      str(out), "--tasks", "level1:1-2", "--dry-run"])
    suite.main()
    printed = capsys.readouterr().out
    assert "KernelBench loop over 2 tasks:" in printed
    assert "kernelpro suite over 2 tasks:" in printed and "--torch-ops allow" in printed
    assert "suite eval --problems" in printed
    assert sorted(os.listdir(out / "candidates" / "level1")) == ["1_A.py", "2_B.py"]
    assert not (out / "rows").exists() and not (out / "table.md").exists()
    tasks = json.loads(next((out / "kernelbench-loop").glob("*-tasks.json")).read_text())
    assert [t["task"] for t in tasks] == ["level1/1_A", "level1/2_B"]


FAKE_KERNELPRO = r"""#!/usr/bin/env python3
# `kernelpro suite eval ... --tasks LIST --dir SUITE`: finishes every listed task but 'Slow'.
import json, os, sys
args = sys.argv[1:]
assert args[:2] == ["suite", "eval"], args
suite_dir = args[args.index("--dir") + 1]
problems = args[args.index("--problems") + 1]
for line in open(args[args.index("--tasks") + 1]):
    level, _, numbers = line.partition(":")
    for n in numbers.split():
        folder = os.path.join(problems, level.strip())
        stem = next(f[:-3] for f in os.listdir(folder) if f.startswith(n + "_"))
        if "Slow" in stem:
            continue
        task = os.path.join(suite_dir, "tasks", level.strip(), stem)
        os.makedirs(os.path.join(task, "candidates"), exist_ok=True)
        json.dump({"status": "done", "seconds": 12.5}, open(os.path.join(task, "result.json"), "w"))
        json.dump({"status": "correct", "speedup": 1.0, "phase_seconds": {"total": 12.0},
                   "peak_device_bytes": {"referee": {"reference": 2 << 30},
                                         "candidate": {"time": 1 << 30}}},
                  open(os.path.join(task, "candidates", "000.json"), "w"))
"""


def test_the_suite_mode_reads_each_tasks_verdict_and_seconds_and_counts_its_start_up_once(
        tmp_path, monkeypatch, capsys):
    kb = make_kernelbench(tmp_path / "kb", ["level1/1_A", "level1/2_Slow", "level2/1_C"])
    fake = tmp_path / "kernelpro"
    fake.write_text(FAKE_KERNELPRO)
    fake.chmod(0o755)
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["kernelbench_suite.py", "--kernelbench", kb, "--out",
                                      str(out), "--tasks", "level1:1-2,level2:1",
                                      "--kernelpro", str(fake), "--skip-kernelbench"])
    suite.main()
    printed = capsys.readouterr().out
    assert "level1/1_A: kernelpro correct in 12.5 s" in printed
    assert "level1/2_Slow: kernelpro error in – s" in printed
    lists = list((out / "kernelpro-suites").glob("*-tasks.txt"))
    assert [p.read_text() for p in lists] == ["level1: 1 2\nlevel2: 1\n"]
    part = json.loads(next((out / "kernelpro-suites").glob("*-part.json")).read_text())
    assert part["tasks_s"] == 25.0  # the fake's tasks claim more than it ran: no overhead
    assert part["overhead_s"] == max(0.0, part["wall_s"] - 25.0)
    rows = {r["task"]: r for r in suite.load_rows(str(out))}
    s = suite.summarize(rows["level2/1_C"])
    assert s["kp_status"] == "correct" and s["kp_wall_s"] == 12.5
    assert s["kp_peak_bytes"] == 3 << 30
    # With KernelBench's side in, the part's own time counts once in kernelpro's total.
    for key in rows:
        suite.update_row(str(out), key, {"task": key}, "kernelbench", kernelbench_record(key))
    _, t = suite.render(suite.load_rows(str(out)))
    assert t["kernelpro_wall_s"] == pytest.approx(25.0 + part["overhead_s"])
    assert not suite.has_side(str(out), "level1/2_Slow", "kernelpro")  # --resume runs it again
