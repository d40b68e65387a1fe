"""Worker steps on CPU: inspect, reference, build cache, check, compare, time, run."""

import json
import os

import pytest
import torch

from kernelpro_worker import steps
from kernelpro_worker.common import StepError

from conftest import ROOT

TINY = os.path.join(ROOT, "tests/problems/tiny_swish.py")
GOOD = os.path.join(ROOT, "tests/candidates/good/cpu_tiny_swish.py")
BASE = {"device": "cpu", "init_seed": 42, "atol": 1e-2, "rtol": 1e-3}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def reference(cache):
    return steps.step_reference(dict(BASE, problem=TINY, cache_dir=cache, check_seeds=[1, 2],
                                     extra_seeds=[1001], timing_seeds=[2001, 2002], fp64_trials=2))


def test_inspect_reports_versions_paths_and_minimum_bytes():
    result = steps.step_inspect({"device": "cpu", "problem": TINY})
    info = result["info"]
    assert info["torch_version"] == torch.__version__
    assert any(p.endswith("include") for p in info["include_paths"])
    cost = result["reference"]
    assert cost["min_bytes"] == 2 * 4096 * 4  # one fp32 input and one output of 4096 elements
    assert cost["flops"] is None or cost["flops"] >= 0
    assert cost["flops_note"]


def test_reference_is_cached_and_describes_the_trials(reference, cache):
    assert reference["status"] == "ok" and not reference["cached"]
    assert reference["trials"] == {"check": ["check_0", "check_1"], "extra": ["extra_0"],
                                   "timing": ["timing_0", "timing_1"]}
    assert reference["fp32"] and reference["fp64_trials"] == ["check_0", "check_1"]
    assert reference["reference_fp64_error"] < 1e-6
    again = steps.step_reference(dict(BASE, problem=TINY, cache_dir=cache, check_seeds=[1, 2],
                                      extra_seeds=[1001], timing_seeds=[2001, 2002], fp64_trials=2))
    assert again["cached"] and again["dir"] == reference["dir"]


def test_nondeterministic_reference_is_a_problem_error(cache):
    with pytest.raises(StepError) as err:
        steps.step_reference(dict(BASE, problem=os.path.join(ROOT, "tests/problems/nondeterministic.py"),
                                  cache_dir=cache, check_seeds=[1], extra_seeds=[], timing_seeds=[1]))
    assert err.value.status == "problem_error" and "nondeterministic" in err.value.message


def test_second_build_of_the_same_source_does_not_call_the_compiler(cache, monkeypatch):
    first = steps.step_build(dict(BASE, candidate=GOOD, cache_dir=cache))
    assert first["status"] == "ok" and os.path.exists(first["extensions"][0]["so_path"])

    def no_compiler(*args, **kwargs):
        raise AssertionError("load_inline was called for a cached build")

    from torch.utils import cpp_extension
    monkeypatch.setattr(cpp_extension, "load_inline", no_compiler)
    second = steps.step_build(dict(BASE, candidate=GOOD, cache_dir=cache))
    assert second["status"] == "ok", second
    assert second["extensions"][0]["cached"]
    assert second["extensions"][0]["so_path"] == first["extensions"][0]["so_path"]


def test_check_compare_time_and_run_on_a_good_candidate(reference, cache, tmp_path):
    work = str(tmp_path)
    checked = steps.step_check(dict(BASE, candidate=GOOD, cache_dir=cache, reference_dir=reference["dir"],
                                    trials=["check_0", "check_1", "extra_0"], out_dir=os.path.join(work, "check")))
    assert checked["status"] == "ok" and checked["findings"] == [], checked
    assert ["refill", "check_1"] in checked["outputs"]
    pairs = [["check/" + a, e] for a, e in checked["outputs"]]
    compared = steps.step_compare(dict(BASE, reference_dir=reference["dir"], actual_dir=work, pairs=pairs,
                                       vacuous_rel_tol=1e-2, precision_policy="fail",
                                       precision_bound=1e-5, precision_factor=16))
    assert compared["passed"], compared
    assert all(row["max_abs_err"] < 1e-5 for row in compared["trials"])
    timed = steps.step_time(dict(BASE, which="candidate", problem=TINY, candidate=GOOD, cache_dir=cache,
                                 reference_dir=reference["dir"], trials=7, budget_s=5,
                                 out_dir=os.path.join(work, "timed")))
    assert timed["status"] == "ok" and len(timed["times_ms"]) == 7
    assert sorted(n for n, _ in timed["outputs"]) == ["timing_0", "timing_1"]
    ran = steps.step_run(dict(BASE, problem=TINY, candidate=GOOD, cache_dir=cache,
                              reference_dir=reference["dir"], iterations=2))
    assert ran["status"] == "ok"
    trace = os.path.join(work, "trace.json")
    traced = steps.step_trace(dict(BASE, problem=TINY, candidate=GOOD, cache_dir=cache,
                                   reference_dir=reference["dir"], trace_path=trace))
    assert traced["status"] == "ok" and os.path.getsize(trace) > 0
    # Only the recorded call: the profiler's warm-up step is discarded.
    with open(trace) as f:
        steps_seen = {e["name"] for e in _events(json.load(f)) if e.get("name", "").startswith("ProfilerStep#")}
    assert len(steps_seen) == 1, steps_seen


def _events(trace):
    """Chrome traces are either {"traceEvents": [...]} or a bare list (older torch)."""
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def test_scan_step_reads_files_without_torch(tmp_path):
    result = steps.step_scan({"problem": TINY, "candidate": os.path.join(
        ROOT, "tests/candidates/adversarial/common/calls_reference_op.py")})
    assert result["problem"]["reference_ops"] == ["sigmoid"]
    assert "calls sigmoid" in result["candidate"]["message"]
