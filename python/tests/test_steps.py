"""Worker steps on CPU: inspect, reference, build cache, check, compare, time, run."""

import hashlib
import json
import os

import pytest
import torch

from kernelpro_worker import (check_step, compare_step, inspect_step, profile_step,
                              reference_step, scan, session)
from kernelpro_worker.candidate import step_build
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
    return reference_step.step_reference(dict(BASE, problem=TINY, cache_dir=cache,
                                              check_seeds=[1, 2], extra_seeds=[1001],
                                              timing_seeds=[2001, 2002], fp64_trials=2))


def build_root(cache, candidate):
    """The build scope the binary gives a candidate: CACHE/builds/<24 hex of its bytes' sha256>."""
    with open(candidate, "rb") as f:
        return os.path.join(cache, "builds", hashlib.sha256(f.read()).hexdigest()[:24])


def candidate_request(reference, cache, candidate, **fields):
    """What the binary sends a candidate's process: the inputs tree, the recipe of inputs too
    large to store and the reference's metadata inline, never the reference directory or the
    cache."""
    inline = {k: reference[k] for k in ("trials", "outputs", "output_aliases_input", "reference_ops")}
    return dict(BASE, candidate=candidate, build_root=build_root(cache, candidate),
                inputs_dir=reference["inputs_dir"], inputs_manifest=reference["inputs_manifest"],
                inputs_recipe=reference["inputs_recipe"], reference=inline, **fields)


def compare_request(reference, work, pairs, problem=TINY):
    """What the binary sends the referee to compare: the reference directory, the fields of the
    reference's result the comparison needs, and what recomputing unstored outputs needs."""
    inline = {k: reference[k] for k in ("outputs", "vacuous", "fp32", "reference_fp64_error",
                                        "fp64_trials", "reference_manifest", "expected_recipe")}
    return dict(BASE, reference_dir=reference["reference_dir"], reference=inline, actual_dir=work,
                pairs=pairs, vacuous_rel_tol=1e-2, precision_policy="fail", precision_bound=1e-5,
                precision_factor=16, problem=problem, inputs_dir=reference["inputs_dir"],
                inputs_manifest=reference["inputs_manifest"],
                inputs_recipe=reference["inputs_recipe"])


def test_inspect_reports_versions_paths_and_minimum_bytes():
    result = inspect_step.step_inspect({"device": "cpu", "problem": TINY})
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
    again = reference_step.step_reference(dict(BASE, problem=TINY, cache_dir=cache,
                                               check_seeds=[1, 2], extra_seeds=[1001],
                                               timing_seeds=[2001, 2002], fp64_trials=2))
    assert again["cached"] and again["reference_dir"] == reference["reference_dir"]
    assert again["manifest_digest"] == reference["manifest_digest"]
    # The expected outputs and the inputs a candidate gets live in separate trees.
    assert reference["reference_dir"] == os.path.join(cache, "references", reference["key"])
    assert reference["inputs_dir"] == os.path.join(cache, "inputs", reference["key"])
    assert sorted(reference["inputs_manifest"]) == [
        "check_0.kpt", "check_1.kpt", "extra_0.kpt", "init_inputs.kpt", "timing_0.kpt", "timing_1.kpt"]
    assert "expected/check_0.kpt" in reference["reference_manifest"]
    assert reference["reference_ops"] == ["mul", "sigmoid"]


def test_nondeterministic_reference_is_a_problem_error(cache):
    with pytest.raises(StepError) as err:
        reference_step.step_reference(dict(
            BASE, problem=os.path.join(ROOT, "tests/problems/nondeterministic.py"),
            cache_dir=cache, check_seeds=[1], extra_seeds=[], timing_seeds=[1]))
    assert err.value.status == "problem_error" and "nondeterministic" in err.value.message


def test_second_build_of_the_same_source_does_not_call_the_compiler(cache, monkeypatch):
    first = step_build(dict(BASE, candidate=GOOD, build_root=build_root(cache, GOOD)))
    assert first["status"] == "ok" and os.path.exists(first["extensions"][0]["so_path"])

    def no_compiler(*args, **kwargs):
        raise AssertionError("load_inline was called for a cached build")

    from torch.utils import cpp_extension
    monkeypatch.setattr(cpp_extension, "load_inline", no_compiler)
    second = step_build(dict(BASE, candidate=GOOD, build_root=build_root(cache, GOOD)))
    assert second["status"] == "ok", second
    assert second["extensions"][0]["cached"]
    assert second["extensions"][0]["so_path"] == first["extensions"][0]["so_path"]


def test_a_build_killed_holding_torchs_lock_file_does_not_stall_the_next(cache):
    """torch's load_inline waits while a `lock` file exists in the build folder; a build killed
    there (kernelpro killed mid-build) leaves one behind."""
    first = step_build(dict(BASE, candidate=GOOD, build_root=build_root(cache, GOOD)))
    build_dir = first["extensions"][0]["build_dir"]
    os.remove(os.path.join(build_dir, "kernelpro-build.json"))  # as if it never finished
    open(os.path.join(build_dir, "lock"), "w").close()
    again = step_build(dict(BASE, candidate=GOOD, build_root=build_root(cache, GOOD)))
    assert again["status"] == "ok", again
    assert not os.path.exists(os.path.join(build_dir, "lock"))


def test_check_compare_time_and_run_on_a_good_candidate(reference, cache, tmp_path):
    work = str(tmp_path)
    checked = check_step.step_check(candidate_request(reference, cache, GOOD,
                                                      trials=["check_0", "check_1", "extra_0"],
                                                      out_dir=os.path.join(work, "check")))
    assert checked["status"] == "ok" and checked["findings"] == [], checked
    assert ["refill", "check_1"] in checked["outputs"]
    pairs = [["check/" + a, e] for a, e in checked["outputs"]]
    compared = compare_step.step_compare(compare_request(reference, work, pairs))
    assert compared["passed"], compared
    assert all(row["max_abs_err"] < 1e-5 for row in compared["trials"])
    # Timing lives in the long-lived processes (session.py): the candidate's calls on fresh
    # inputs, a sample of them kept; the referee times the reference and verifies the sample.
    host = session.CandidateHost()
    assert host.load(candidate_request(reference, cache, GOOD))["status"] == "ok"
    timed = host.time(candidate_request(reference, cache, GOOD, calls=7, sample_p=1.0,
                                        out_dir=os.path.join(work, "timed")))
    assert timed["status"] == "ok" and len(timed["times_ms"]) == 7, timed
    assert len(timed["samples"]) == 7 and timed["findings"] == []
    referee = session.Referee()
    referee.reference(dict(BASE, problem=TINY, cache_dir=cache, check_seeds=[1, 2],
                           extra_seeds=[1001], timing_seeds=[2001, 2002], fp64_trials=2))
    timed_ref = referee.time(dict(BASE, problem=TINY, calls=3))
    assert timed_ref["status"] == "ok" and len(timed_ref["times_ms"]) == 3
    verified = referee.verify(dict(BASE, problem=TINY, actual_dir=os.path.join(work, "timed"),
                                   samples=timed["samples"], vacuous_rel_tol=1e-2))
    assert verified["passed"] and len(verified["trials"]) == 7, verified
    # A kept output is named by the harness: a path elsewhere (say, the expected outputs) is not
    # read.
    forged = dict(timed["samples"][0], file=os.path.join(reference["reference_dir"], "expected",
                                                          "timing_0.kpt"))
    refused = referee.verify(dict(BASE, problem=TINY, actual_dir=os.path.join(work, "timed"),
                                  samples=[forged], vacuous_rel_tol=1e-2))
    assert not refused["passed"] and "not a kept output's name" in refused["message"], refused
    # A suite's warm referee moves on to the next task's problem: this one's model, timing sets
    # and timers leave the device (they come back from the cache if it is asked again).
    assert "timer" in referee.problems[TINY]
    referee.reference(dict(BASE, problem=LINEAR, cache_dir=cache, check_seeds=[1],
                           extra_seeds=[], timing_seeds=[2001], fp64_trials=0))
    assert sorted(referee.problems[TINY]) == ["meta", "request"]
    again = referee.verify(dict(BASE, problem=TINY, actual_dir=os.path.join(work, "timed"),
                                samples=timed["samples"][:2], vacuous_rel_tol=1e-2))
    assert again["passed"], again
    ran = profile_step.step_run(candidate_request(reference, cache, GOOD, iterations=2))
    assert ran["status"] == "ok"
    trace = os.path.join(work, "trace.json")
    traced = profile_step.step_trace(candidate_request(reference, cache, GOOD, trace_path=trace))
    assert traced["status"] == "ok" and os.path.getsize(trace) > 0
    # Only the recorded call: the profiler's warm-up step is discarded.
    with open(trace) as f:
        steps_seen = {e["name"] for e in _events(json.load(f)) if e.get("name", "").startswith("ProfilerStep#")}
    assert len(steps_seen) == 1, steps_seen


def _events(trace):
    """Chrome traces are either {"traceEvents": [...]} or a bare list (older torch)."""
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def test_scan_step_reads_files_without_torch(tmp_path):
    result = scan.step_scan({"problem": TINY, "candidate": os.path.join(
        ROOT, "tests/candidates/adversarial/common/calls_reference_op.py")})
    assert result["problem"]["reference_ops"] == ["sigmoid"]
    assert "calls sigmoid" in result["candidate"]["message"]


def reference_request(cache, problem=TINY, **fields):
    request = dict(BASE, problem=problem, cache_dir=cache, check_seeds=[1, 2], extra_seeds=[1001],
                   timing_seeds=[2001, 2002], fp64_trials=2)
    request.update(fields)
    return request


def test_a_changed_reference_cache_is_rebuilt_with_a_note(tmp_path):
    from kernelpro_worker import plain

    cache = str(tmp_path)
    first = reference_step.step_reference(reference_request(cache))
    path = os.path.join(first["reference_dir"], "expected", "check_0.kpt")
    plain.save(path, [torch.zeros(4096)])
    again = reference_step.step_reference(reference_request(cache))
    assert not again["cached"]
    assert any("failed its content check (expected/check_0.kpt: content hash differs); rebuilt" in n
               for n in again["notes"]), again["notes"]
    assert again["manifest_digest"] == first["manifest_digest"]  # the same bytes again
    assert reference_step.step_reference(reference_request(cache))["cached"]
    # A missing input file and a stray file are caught too.
    os.remove(os.path.join(first["inputs_dir"], "timing_1.kpt"))
    assert "inputs: timing_1.kpt: missing" in " ".join(
        reference_step.step_reference(reference_request(cache))["notes"])
    with open(os.path.join(first["reference_dir"], "expected", "extra.kpt"), "w") as f:
        f.write("x")
    assert "expected/extra.kpt: not in the manifest" in " ".join(
        reference_step.step_reference(reference_request(cache))["notes"])


def test_a_cache_rewritten_consistently_with_its_manifest_fails_the_recomputed_trial(tmp_path):
    from kernelpro_worker import plain

    cache = str(tmp_path)
    first = reference_step.step_reference(reference_request(cache))
    meta_path = os.path.join(first["reference_dir"], "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    for rel in meta["reference_manifest"]:
        meta["reference_manifest"][rel] = plain.save(os.path.join(first["reference_dir"], rel),
                                                     [torch.zeros(4096)])
    meta["manifest_digest"] = reference_step.manifest_digest(meta["reference_manifest"],
                                                             meta["inputs_manifest"],
                                                             meta["inputs_recipe"])
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    again = reference_step.step_reference(reference_request(cache))
    assert not again["cached"]
    assert any("expected/check_0.kpt: differs from a fresh run of the reference" in n
               for n in again["notes"]), again["notes"]


def test_compare_and_check_refuse_reference_files_changed_after_the_reference_step(reference, cache, tmp_path):
    from kernelpro_worker import plain

    # A private copy of the reference, so the module's shared one stays intact.
    private = reference_step.step_reference(reference_request(str(tmp_path / "cache")))
    work = str(tmp_path / "work")
    plain.save(os.path.join(work, "check", "check_0.kpt"), [torch.zeros(4096)])
    plain.save(os.path.join(private["reference_dir"], "expected", "check_0.kpt"), [torch.zeros(4096)])
    with pytest.raises(StepError) as err:
        compare_step.step_compare(compare_request(private, work, [["check/check_0", "check_0"]]))
    assert err.value.status == "reference_changed"
    assert err.value.message.startswith("the reference's expected/check_0.kpt changed after the "
                                        "reference step wrote it (its content hash is ")
    plain.save(os.path.join(private["inputs_dir"], "check_1.kpt"), [torch.zeros(4096)])
    checked = check_step.step_check(candidate_request(private, cache, GOOD, trials=["check_0"],
                                                      out_dir=os.path.join(work, "check")))
    assert checked["status"] == "reference_changed", checked
    assert checked["message"].startswith("the problem's input file check_1.kpt changed after")


def _write_candidate(tmp_path, body, name="cand.py"):
    path = tmp_path / name
    path.write_text("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n" + body)
    return str(path)


def _check(reference, cache, candidate, tmp_path, **fields):
    return check_step.step_check(candidate_request(reference, cache, candidate, trials=["check_0"],
                                                   out_dir=str(tmp_path / "check"), **fields))


def test_an_output_that_is_not_a_plain_tensor_is_incorrect_naming_its_type(reference, cache, tmp_path):
    subclass = os.path.join(ROOT, "tests/candidates/adversarial/common/tensor_subclass.py")
    checked = _check(reference, cache, subclass, tmp_path)
    assert checked["status"] == "incorrect", checked
    assert "output 0 is a EvilTensor, a subclass of torch.Tensor" in checked["message"]
    not_tensor = _write_candidate(tmp_path, "class ModelNew(nn.Module):\n"
                                  "    def forward(self, x):\n        return [x.numpy()]\n")
    checked = _check(reference, cache, not_tensor, tmp_path)
    assert checked["status"] == "incorrect" and "output 0 is a ndarray, not a tensor" in checked["message"]


def test_nan_outputs_are_an_incorrect_verdict_in_strict_json(reference, cache, tmp_path):
    from kernelpro_worker import plain
    from kernelpro_worker.common import write_json

    work = str(tmp_path)
    plain.save(os.path.join(work, "check", "check_0.kpt"), [torch.full((4096,), float("nan"))])
    compared = compare_step.step_compare(
        compare_request(reference, work, [["check/check_0", "check_0"]]))
    assert not compared["passed"]
    assert compared["message"] == "trial check_0: output 0 has 4096 NaN values (of 4096)"
    result_path = os.path.join(work, "result.json")
    write_json(result_path, compared)
    def strict(name):  # what the binary's parser does with NaN and Infinity
        raise ValueError(f"non-JSON number {name}")

    with open(result_path) as f:
        row = json.loads(f.read(), parse_constant=strict)["trials"][0]
    assert row["max_abs_err"] is None and row["max_abs_err_text"] == "inf"


def test_a_malformed_output_file_is_an_incorrect_verdict(reference, cache, tmp_path):
    work = str(tmp_path)
    os.makedirs(os.path.join(work, "check"))
    import pickle
    with open(os.path.join(work, "check", "check_0.kpt"), "wb") as f:
        pickle.dump([torch.zeros(4096)], f)
    compared = compare_step.step_compare(
        compare_request(reference, work, [["check/check_0", "check_0"]]))
    assert not compared["passed"]
    assert "the recorded output is not plain tensors" in compared["message"]


def test_a_reference_with_nan_outputs_is_a_problem_error(tmp_path):
    with pytest.raises(StepError) as err:
        reference_step.step_reference(reference_request(
            str(tmp_path), problem=os.path.join(ROOT, "tests/problems/nan_reference.py")))
    assert err.value.status == "problem_error"
    assert "the reference's output 0 on trial check_0 has " in err.value.message
    assert " NaN values (of 4096); a reference must produce finite outputs" in err.value.message


LINEAR = os.path.join(ROOT, "tests/problems/small_linear.py")


def test_the_check_step_names_the_reference_operator_a_candidate_runs(cache, tmp_path):
    reference = reference_step.step_reference(reference_request(cache, problem=LINEAR))
    assert {"addmm"} <= set(reference["reference_ops"])
    functional = os.path.join(ROOT, "tests/candidates/adversarial/common/linear_functional.py")
    checked = _check(reference, cache, functional, tmp_path)
    assert [f["message"] for f in checked["findings"]] == [
        "forward calls aten.addmm, an operator the reference uses; write the computation yourself "
        "(policy 'forbid'; allow it with --allow-torch-op addmm)"]
    assert _check(reference, cache, functional, tmp_path, allowed_ops=["linear"])["findings"] == []
    assert _check(reference, cache, functional, tmp_path, torch_ops_policy="allow")["findings"] == []


CUDA_CANDIDATE = os.path.join(ROOT, "tests/candidates/good/cuda_relu_rand.py")


def test_a_cuda_candidate_built_for_cpu_is_told_to_use_the_cuda_device(cache):
    """Without this, torch's CUDA architecture detection fails on a machine without a GPU with
    'list index out of range', which says nothing of what to do."""
    built = step_build(dict(BASE, candidate=CUDA_CANDIDATE,
                            build_root=build_root(cache, CUDA_CANDIDATE)))
    assert built["status"] == "compile_error"
    assert built["message"].startswith("this candidate builds CUDA; use --device cuda"), built


def test_a_cuda_extension_loaded_from_cu_files_on_cpu_gets_the_same_message(cache, tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k() {}\n")
    candidate = _write_candidate(tmp_path, f"""
from torch.utils.cpp_extension import load
ext = load(name="kp_cu_file", sources=[{str(cu)!r}])

class ModelNew(nn.Module):
    def forward(self, x):
        return x
""")
    built = step_build(dict(BASE, candidate=candidate,
                            build_root=build_root(cache, candidate)))
    assert built["status"] == "compile_error"
    assert built["message"].startswith("this candidate builds CUDA; use --device cuda"), built


def test_large_inputs_are_regenerated_from_their_seed_not_stored(cache, tmp_path):
    """With every input over the storage limit (0 bytes here; 1 MiB by default), the inputs tree
    holds only init_inputs, the timing trials keep no expected outputs, and a candidate's check,
    timing and the cache's spot check all work from the recipe."""
    # Seeds of its own: a reference (key) apart from the module's, in the module's cache, so that
    # the candidate's build is the one the other tests made.
    request = dict(BASE, problem=TINY, cache_dir=cache, check_seeds=[11, 12],
                   extra_seeds=[1011], timing_seeds=[2011, 2012], fp64_trials=2,
                   store_inputs_up_to=0)
    reference = reference_step.step_reference(request)
    assert sorted(reference["inputs_manifest"]) == ["init_inputs.kpt"]
    assert sorted(reference["inputs_recipe"]["trials"]) == ["check_0", "check_1", "extra_0",
                                                            "timing_0", "timing_1"]
    variant = reference["inputs_recipe"]["trials"]["extra_0"]["variant"]
    assert variant == {"signs": True, "scales": True}
    assert sorted(os.listdir(os.path.join(reference["reference_dir"], "expected"))) == [
        "check_0.kpt", "check_1.kpt", "extra_0.kpt"]
    work = str(tmp_path / "work")
    checked = check_step.step_check(candidate_request(reference, cache, GOOD,
                                                      trials=["check_0", "check_1", "extra_0"],
                                                      out_dir=os.path.join(work, "check")))
    assert checked["status"] == "ok", checked
    pairs = [["check/" + a, e] for a, e in checked["outputs"]]
    assert compare_step.step_compare(compare_request(reference, work, pairs))["passed"]
    host = session.CandidateHost()
    loaded = host.load(candidate_request(reference, cache, GOOD))
    assert loaded["status"] == "ok", loaded
    timed = host.time(candidate_request(reference, cache, GOOD, calls=3, sample_p=1.0,
                                        out_dir=os.path.join(work, "timed")))
    assert timed["status"] == "ok", timed
    again = reference_step.step_reference(request)
    assert again["cached"], again["notes"]


def test_regenerated_inputs_that_differ_from_the_recipe_are_a_changed_reference(cache, tmp_path):
    request = dict(BASE, problem=TINY, cache_dir=cache, check_seeds=[21], extra_seeds=[],
                   timing_seeds=[2021], fp64_trials=0, store_inputs_up_to=0)
    reference = reference_step.step_reference(request)
    forged = json.loads(json.dumps(reference["inputs_recipe"]))
    forged["trials"]["check_0"]["seed"] = 7  # other inputs than the reference's
    checked = check_step.step_check(dict(candidate_request(reference, cache, GOOD,
                                                           trials=["check_0"],
                                                           out_dir=str(tmp_path / "check")),
                                         inputs_recipe=forged))
    assert checked["status"] == "reference_changed", checked
    assert "inputs of trial check_0" in checked["message"]
    # The recipe is covered by the manifests' digest: a cache whose recipe was rewritten is
    # rebuilt, not trusted.
    meta_path = os.path.join(reference["reference_dir"], "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    meta["inputs_recipe"] = forged
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    again = reference_step.step_reference(request)
    assert not again["cached"]
    assert any("manifests do not match their digest" in n for n in again["notes"]), again["notes"]


def test_running_out_of_memory_while_regenerating_inputs_is_not_a_changed_reference(
        cache, tmp_path, monkeypatch):
    # A changed reference makes the binary recompute it, which would only run out of memory again
    # (KernelBench's 6 GiB ReLU on an H100 was reported as a changed reference).
    request = dict(BASE, problem=TINY, cache_dir=cache, check_seeds=[31], extra_seeds=[],
                   timing_seeds=[2031], fp64_trials=0, store_inputs_up_to=0)
    reference = reference_step.step_reference(request)
    from kernelpro_worker import tensors

    def no_memory(*args, **kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 6.00 GiB. GPU 0 has a total "
                           "capacity of 79.18 GiB of which 4.49 GiB is free.")

    monkeypatch.setattr(tensors, "generate_inputs", no_memory)
    checked = check_step.step_check(candidate_request(reference, cache, GOOD, trials=["check_0"],
                                                      out_dir=str(tmp_path / "check")))
    assert checked["status"] == "runtime_error", checked
    assert "out of memory" in checked["message"] and "changed" not in checked["message"]


def test_timing_sets_past_the_memory_cap_are_not_made_and_the_notes_say_so(cache, tmp_path):
    # Each timing set is held on the device by both timing processes: a 6 GiB input times three
    # sets would be 18 GiB more in each.
    request = dict(BASE, problem=TINY, cache_dir=cache, check_seeds=[41], extra_seeds=[],
                   timing_seeds=[2041, 2042, 2043], fp64_trials=0, timing_sets_up_to=1)
    reference = reference_step.step_reference(request)
    assert reference["trials"]["timing"] == ["timing_0"]
    assert any(n.startswith("timed on 1 input set(s), not 3") for n in reference["notes"]), \
        reference["notes"]
    host = session.CandidateHost()
    assert host.load(candidate_request(reference, cache, GOOD))["status"] == "ok"
    timed = host.time(candidate_request(reference, cache, GOOD, calls=4, sample_p=1.0,
                                        out_dir=str(tmp_path / "timed")))
    assert timed["status"] == "ok" and {s["set"] for s in timed["samples"]} == {0}, timed


def _tree_bytes(*roots):
    return sum(os.path.getsize(os.path.join(d, f)) for root in roots
               for d, _, files in os.walk(root) for f in files)


def test_a_problem_with_large_outputs_keeps_its_cache_entry_small(tmp_path):
    """An 8 MiB output, as swish's 64 MiB one in miniature: neither its inputs nor its expected
    outputs (fp32 and fp64) are stored, so references/<key>/ and inputs/<key>/ together hold
    meta.json and the init inputs only; before layout 5 they held 7 x 8 + 2 x 16 = 88 MiB."""
    problem = tmp_path / "big_swish.py"
    problem.write_text("import torch\nimport torch.nn as nn\n\n"
                       "class Model(nn.Module):\n"
                       "    def forward(self, x):\n        return x * torch.sigmoid(x)\n\n"
                       "def get_inputs():\n    return [torch.randn(1 << 21)]\n\n"
                       "def get_init_inputs():\n    return []\n")
    reference = reference_step.step_reference(dict(
        BASE, problem=str(problem), cache_dir=str(tmp_path / "cache"), check_seeds=[1, 2, 3, 4, 5],
        extra_seeds=[1001, 1002], timing_seeds=[2001, 2002, 2003], fp64_trials=2))
    assert sorted(reference["expected_recipe"]) == [
        "expected/check_0.kpt", "expected/check_1.kpt", "expected/check_2.kpt",
        "expected/check_3.kpt", "expected/check_4.kpt", "expected/extra_0.kpt",
        "expected/extra_1.kpt", "expected64/check_0.kpt", "expected64/check_1.kpt"]
    assert reference["reference_manifest"] == {}
    assert _tree_bytes(reference["reference_dir"], reference["inputs_dir"]) < 64 << 10
    again = reference_step.step_reference(dict(
        BASE, problem=str(problem), cache_dir=str(tmp_path / "cache"), check_seeds=[1, 2, 3, 4, 5],
        extra_seeds=[1001, 1002], timing_seeds=[2001, 2002, 2003], fp64_trials=2))
    assert again["cached"], again["notes"]  # the first check trial recomputed bit for bit


def test_unstored_expected_outputs_are_recomputed_for_the_same_comparison(cache, tmp_path):
    """With every output over the storage limit (0 bytes here), the compare step recomputes the
    expected outputs: a good candidate passes with the same errors and fp64 check as against
    stored files, a wrong output fails with the same reason."""
    stored = reference_step.step_reference(reference_request(str(tmp_path / "stored")))
    unstored = reference_step.step_reference(reference_request(cache, store_outputs_up_to=0,
                                                               check_seeds=[31, 32]))
    assert unstored["reference_manifest"] == {}
    assert os.listdir(unstored["reference_dir"]) == ["meta.json"]
    assert sorted(unstored["expected_recipe"]) == [
        "expected/check_0.kpt", "expected/check_1.kpt", "expected/extra_0.kpt",
        "expected64/check_0.kpt", "expected64/check_1.kpt"]
    stored_same_seeds = reference_step.step_reference(
        reference_request(str(tmp_path / "stored2"), check_seeds=[31, 32]))
    # The fingerprints of what was not stored are those of the tensors a stored entry holds.
    from kernelpro_worker import plain, tensors

    for rel, fingerprint in unstored["expected_recipe"].items():
        kept = plain.load(os.path.join(stored_same_seeds["reference_dir"], rel))
        assert fingerprint.startswith("fp1:") and tensors.fingerprint(kept) == fingerprint
    work = str(tmp_path / "work")
    checked = check_step.step_check(candidate_request(unstored, cache, GOOD,
                                                      trials=["check_0", "check_1", "extra_0"],
                                                      out_dir=os.path.join(work, "check")))
    assert checked["status"] == "ok", checked
    pairs = [["check/" + a, e] for a, e in checked["outputs"]]
    recomputed = compare_step.step_compare(compare_request(unstored, work, pairs))
    from_files = compare_step.step_compare(compare_request(stored_same_seeds, work, pairs))
    assert recomputed["passed"], recomputed
    assert recomputed == from_files
    assert all("fp64_relative_error" in row for row in recomputed["trials"][:2])
    plain.save(os.path.join(work, "check", "check_1.kpt"), [torch.zeros(4096)])
    failed = compare_step.step_compare(compare_request(unstored, work, pairs))
    assert not failed["passed"]
    assert failed == compare_step.step_compare(compare_request(stored_same_seeds, work, pairs))
    assert stored["reference_manifest"]  # the default limit stores this problem's small outputs


def test_a_forged_output_digest_is_a_changed_reference_and_fails_the_recomputed_trial(tmp_path):
    cache = str(tmp_path / "cache")
    reference = reference_step.step_reference(reference_request(cache, store_outputs_up_to=0))
    work = str(tmp_path / "work")
    from kernelpro_worker import plain, tensors

    plain.save(os.path.join(work, "check", "check_1.kpt"), [torch.zeros(4096)])
    forged = json.loads(json.dumps(reference))
    forged["expected_recipe"]["expected/check_1.kpt"] = tensors.fingerprint([torch.zeros(4096)])
    with pytest.raises(StepError) as err:
        compare_step.step_compare(compare_request(forged, work, [["check/check_1", "check_1"]]))
    assert err.value.status == "reference_changed"
    assert err.value.message.startswith("the reference's expected/check_1.kpt changed after the "
                                        "reference step wrote it (recomputed from the problem, ")
    # meta.json rewritten consistently (digest of the manifests included): the spot check
    # recomputes the first check trial and refuses the entry.
    meta_path = os.path.join(reference["reference_dir"], "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    meta["expected_recipe"]["expected/check_0.kpt"] = tensors.fingerprint([torch.zeros(4096)])
    meta["manifest_digest"] = reference_step.manifest_digest(
        meta["reference_manifest"], meta["inputs_manifest"], meta["inputs_recipe"],
        meta["expected_recipe"])
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    again = reference_step.step_reference(reference_request(cache, store_outputs_up_to=0))
    assert not again["cached"]
    assert any("expected/check_0.kpt: differs from a fresh run of the reference (not the same "
               "bits)" in n for n in again["notes"]), again["notes"]
    # The binary's answer to a changed reference (rebuild) stores every output: a reference
    # whose outputs differ between processes is then compared against files.
    rebuilt = reference_step.step_reference(reference_request(cache, store_outputs_up_to=0,
                                                              rebuild=True))
    assert rebuilt["expected_recipe"] == {}
    assert "expected/check_1.kpt" in rebuilt["reference_manifest"]


def test_the_inputs_probe_refuses_a_problem_that_cannot_make_them_and_skips_a_cached_one(
        tmp_path):
    broken = tmp_path / "broken_inputs.py"
    broken.write_text("import torch\nimport torch.nn as nn\n\n"
                      "class Model(nn.Module):\n"
                      "    def forward(self, x):\n        return x\n\n"
                      "def get_inputs():\n    raise ValueError('no data here')\n\n"
                      "def get_init_inputs():\n    return []\n")
    cache = str(tmp_path / "cache")
    with pytest.raises(StepError) as err:
        reference_step.step_probe_inputs(reference_request(cache, problem=str(broken)))
    assert err.value.status == "problem_error"
    assert err.value.message == "get_inputs() failed: ValueError: no data here"
    fresh = reference_step.step_probe_inputs(reference_request(cache))
    assert fresh == {"status": "ok", "message": "", "cached": False}
    reference_step.step_reference(reference_request(cache))
    assert reference_step.step_probe_inputs(reference_request(cache))["cached"]


def test_the_reference_step_takes_the_probes_inputs_instead_of_making_them_again(tmp_path):
    from kernelpro_worker import plain, tensors

    counted = tmp_path / "counted_inputs.py"
    calls = tmp_path / "calls"
    counted.write_text("import torch\nimport torch.nn as nn\n\n"
                       "class Model(nn.Module):\n"
                       "    def forward(self, x):\n        return x * 2\n\n"
                       "def get_inputs():\n"
                       f"    open({str(calls)!r}, 'a').write('x')\n"
                       "    return [torch.randn(64)]\n\n"
                       "def get_init_inputs():\n    return []\n")
    request = reference_request(str(tmp_path / "cache"), problem=str(counted), check_seeds=[7],
                                extra_seeds=[], timing_seeds=[2001])
    reference_step.step_probe_inputs(request)
    assert calls.read_text() == "x"
    made = reference_step.step_reference(request)
    # check_0 came from the probe: get_inputs() ran for the timing trial and the first trial's
    # second run only (the nondeterminism check reruns the model, not get_inputs).
    assert calls.read_text() == "xx", calls.read_text()
    assert made["inputs_manifest"]["check_0.kpt"] == plain.digest(
        tensors.generate_inputs(reference_step.load_problem(str(counted)), 7))
    assert not reference_step._PROBED
