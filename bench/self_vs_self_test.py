import ast

import self_vs_self

PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8)]
'''


def test_the_generated_candidate_is_the_reference_renamed():
    source = self_vs_self.as_candidate(PROBLEM)
    tree = ast.parse(source)
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert classes == ["ModelNew"]
    # kernelpro's scan fails a candidate that names the reference class Model.
    assert not any(isinstance(n, ast.Name) and n.id == "Model" for n in ast.walk(tree))
    assert "super(ModelNew, self)" in source


def result(speedup, low, high, status="correct"):
    return {"status": status, "speedup": speedup, "speedup_interval": [low, high],
            "reference_ms": 0.1, "candidate_ms": 0.1 / speedup}


def test_ten_honest_runs_pass():
    runs = [result(1.0 + d, 0.99 + d, 1.01 + d) for d in (-0.004, 0.002) * 5]
    s = self_vs_self.summarize("p", runs, 10)
    assert s["passed"] and s["within_1pct"] == 10 and s["intervals_excluding_1"] == 0


def test_one_interval_excluding_1_is_tolerated_two_are_not():
    honest = [result(1.0, 0.99, 1.01)] * 8
    one = honest + [result(1.0, 0.99, 1.01), result(1.008, 1.002, 1.012)]
    two = honest + [result(1.008, 1.002, 1.012), result(0.993, 0.990, 0.998)]
    assert self_vs_self.summarize("p", one, 10)["passed"]
    s = self_vs_self.summarize("p", two, 10)
    assert not s["passed"] and s["intervals_excluding_1"] == 2


def test_a_speedup_beyond_1_percent_fails_even_with_a_wide_interval():
    runs = [result(1.0, 0.98, 1.02)] * 9 + [result(1.02, 0.95, 1.05)]
    s = self_vs_self.summarize("p", runs, 10)
    assert not s["passed"] and s["within_1pct"] == 9


def test_a_run_without_a_result_fails_the_problem():
    runs = [result(1.0, 0.99, 1.01)] * 9 + [None]
    s = self_vs_self.summarize("p", runs, 10)
    assert not s["passed"] and s["correct"] == 9
    assert self_vs_self.table_row(s)[5] == "9/10 (9 correct)"


def test_batch_puts_every_repeat_in_one_call_as_its_own_candidate(tmp_path):
    import os
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(__file__), "self_vs_self.py")
    out = subprocess.run([sys.executable, script, "--out", str(tmp_path), "--dry-run", "--batch",
                          "--repeats", "3", "--problems", os.path.join(os.path.dirname(__file__),
                                                                       "problems", "relu_4m.py")],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("relu_4m x3 in one call:")
    assert out.count("--candidate") == 3
    assert sorted(os.listdir(tmp_path / "candidates")) == [f"relu_4m_self_{i}.py" for i in (1, 2, 3)]


def test_the_busy_and_in_process_ratios_say_where_a_bias_comes_from():
    # The H100's relu_4m (2026-12-06): the candidate's kernel itself about 1 % longer, and the
    # same inside its own process.
    run = dict(result(0.987, 0.977, 1.002), speedup_in_process=0.983,
               reference_calls={"busy_ms": 0.013328}, candidate_calls={"busy_ms": 0.0135035})
    s = self_vs_self.summarize("relu_4m", [run], 1)
    assert abs(s["median_busy_ratio"] - 0.013328 / 0.0135035) < 1e-9
    assert s["median_in_process"] == 0.983
    row = self_vs_self.table_row(s)
    assert row[7] == "0.987x" and row[8] == "0.983x"
    # Results without those fields (the CPU, older records) leave the columns empty.
    plain = self_vs_self.summarize("p", [result(1.0, 0.99, 1.01)], 1)
    assert plain["median_busy_ratio"] is None and plain["median_in_process"] is None
