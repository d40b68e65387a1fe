import json

import pytest

import gated_ratio as gr


def test_a_pair_is_named_with_its_problem_and_candidate():
    name, (problem, candidate) = gr.parse_pair("scale_add=bench/p.py:bench/c.py")
    assert name == "scale_add" and problem.endswith("bench/p.py") and candidate.endswith("c.py")
    with pytest.raises(ValueError):
        gr.parse_pair("scale_add=bench/p.py")


def test_a_row_passes_within_10_percent_of_the_gated_ratio_and_shows_the_others():
    # The H100's scale_add pair (2026-12-06): 1.99x against a gated 5.63 / 3.04 us.
    kp = {"status": "correct", "speedup": 1.99, "reference_ms": 0.00592,
          "candidate_ms": 0.0029755}
    row = gr.row_for("scale_add", kp, {"span_us": 5.632, "sum_us": 4.72},
                     {"span_us": 3.04, "sum_us": 3.04}, None)
    assert row["passed"] and row["off"] == pytest.approx(1.99 / (5.632 / 3.04) - 1)
    assert row["kernel_sum_ratio"] == pytest.approx(4.72 / 3.04)
    cells = gr.table_row(row)
    assert cells[4] == "1.85x" and cells[5] == "+7.4 %" and cells[-1] == "pass"
    # kernelpro's old ungated 4.65x for the same pair is far off.
    assert not gr.row_for("scale_add", dict(kp, speedup=4.65), {"span_us": 5.632},
                          {"span_us": 3.04}, None)["passed"]
    # No gated reading: never a pass.
    assert not gr.row_for("x", kp, None, None, None)["passed"]


def test_kernelbench_records_give_its_ratio_and_kernelpros_own_run(tmp_path):
    (tmp_path / "rows").mkdir()
    record = {"kernelbench_warm": {"ref_runtime_ms": 0.0037, "runtime_ms": 0.0059},
              "kernelpro_warm": {"results": [{"status": "correct", "speedup": 0.396}]}}
    (tmp_path / "rows" / "add.json").write_text(json.dumps(record))
    assert gr.kernelbench_ratio(str(tmp_path), "add") == pytest.approx(0.0037 / 0.0059)
    assert gr.kernelbench_kernelpro(str(tmp_path), "add")["speedup"] == 0.396
    assert gr.kernelbench_ratio(str(tmp_path), "fuse_gelu") is None
    assert gr.kernelbench_kernelpro(None, "add") is None
