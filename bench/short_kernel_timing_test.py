import ast

import short_kernel_timing as skt


def test_sizes_shared_by_both_candidates_take_one_kernelpro_call():
    plan = skt.candidates_by_size({"fused": [10, 12], "three": [10, 27]})
    assert plan == {10: ["fused", "three"], 12: ["fused"], 27: ["three"]}
    assert list(skt.candidates_by_size(skt.SIZES)) == sorted(skt.candidates_by_size(skt.SIZES))


def test_the_generated_problem_is_a_kernelbench_problem_of_that_size():
    tree = ast.parse(skt.PROBLEM_TEMPLATE.format(exp=14))
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert names == {"Model", "get_inputs", "get_init_inputs"}
    assert "N = 1 << 14" in skt.PROBLEM_TEMPLATE.format(exp=14)


def test_rows_pass_within_half_a_us_or_3_percent_of_the_gated_profiler_span():
    plain = {"span_us": 13.6, "sum_us": 3.4, "kernels_per_call": 3}
    short = skt.compare(0.0058, plain, {"span_us": 5.5, "gate_held": 100})
    assert short["passed"] and abs(short["diff_us"] - 0.3) < 1e-9
    assert short["profiler_span_us"] == 13.6 and short["profiler_gated_us"] == 5.5
    # Within 1 us of the gated span is no longer enough for a short call; the ungated span never
    # is the target.
    assert not skt.compare(0.0062, plain, {"span_us": 5.5})["passed"]
    assert not skt.compare(0.0136, plain, {"span_us": 5.5})["passed"]
    long = skt.compare(1.020, None, {"span_us": 1000.0})
    assert long["passed"] and abs(long["diff_pct"] - 2.0) < 1e-9
    assert not skt.compare(1.040, None, {"span_us": 1000.0})["passed"]


def test_a_row_without_a_measurement_fails():
    row = skt.compare(None, {"span_us": 3.0}, {"span_us": 3.0})
    assert not row["passed"]
    assert skt.table_row({"candidate": "c", "exp": 10, **row})[-1] == "FAIL"
    assert not skt.compare(0.003, {"span_us": 3.0}, None)["passed"]


def test_the_profiler_loads_every_shared_object_kernelpro_reported_once():
    results = [{"build": {"shared_objects": ["/a.so"]}}, None,
               {"build": {"shared_objects": ["/a.so", "/b.so"]}}]
    assert skt.shared_objects(results) == ["/a.so", "/b.so"]
