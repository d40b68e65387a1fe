"""Shape variants (shapes.py): derived from a problem's size constants, given by the problem, kept
only when the reference accepts them; and the candidate's side, one variant failing on its own."""

import os
import textwrap

import pytest

from kernelpro_worker import compare_step, reference_step, session, shapes
from kernelpro_worker.common import StepError
from kernelpro_worker.loading import load_problem

from conftest import ROOT

SCALE = os.path.join(ROOT, "tests/problems/shape_scale.py")
TINY = os.path.join(ROOT, "tests/problems/tiny_swish.py")
BASE = {"device": "cpu", "init_seed": 42, "atol": 1e-2, "rtol": 1e-3}


def reference_request(cache, problem, mode):
    return dict(BASE, problem=problem, cache_dir=cache, check_seeds=[1], extra_seeds=[],
                timing_seeds=[2001], fp64_trials=0, shapes=mode, shape_seed=3001)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_the_size_constants_are_the_integers_the_input_functions_read(tmp_path):
    problem = load_problem(write(tmp_path, "p.py", """
        import torch
        batch_size = 16
        dim = 16384
        kernel_size = 3
        stride_len = 32
        unused = 4096
        reduce_dim = 1
        flag = True
        class Model(torch.nn.Module):
            def forward(self, x):
                return x.sum(reduce_dim)
        def get_inputs():
            return [torch.randn(batch_size, dim, kernel_size + stride_len * 0 + reduce_dim)]
        def get_init_inputs():
            return [flag]
        """))
    assert shapes.size_constants(problem) == {"batch_size": 16, "dim": 16384}
    halved, odd = shapes.derived_settings({"batch_size": 16, "dim": 16384})
    assert halved == {"batch_size": 8, "dim": 8192}
    assert odd == {"batch_size": 9, "dim": 8193}
    assert shapes.describe(odd) == "batch_size=9, dim=8193"


def test_derived_variants_rebuild_inputs_and_the_model_from_the_changed_constants(tmp_path):
    meta = reference_step.step_reference(reference_request(str(tmp_path), SCALE, "auto"))
    record = meta["shapes"]
    assert record["mode"] == "derived"
    assert [v["label"] for v in record["variants"]] == ["batch_size=4, dim=32",
                                                        "batch_size=5, dim=33"]
    assert record["variants"][1]["inputs"] == [{"shape": [5, 33], "dtype": "float32"}]
    assert meta["trials"]["shape"] == ["shape_0", "shape_1"]
    # The init inputs of each variant are stored beside its inputs: Model(dim) was built from 33.
    assert "shape_1_init.kpt" in meta["inputs_manifest"]
    assert "expected/shape_1.kpt" in meta["reference_manifest"]
    # A second step finds the same entry cached; with shapes off the entry is another one.
    again = reference_step.step_reference(reference_request(str(tmp_path), SCALE, "auto"))
    assert again["cached"] and again["shapes"] == record
    off = reference_step.step_reference(reference_request(str(tmp_path), SCALE, "off"))
    assert off["shapes"]["variants"] == [] and off["key"] != meta["key"]


def test_a_derived_variant_the_reference_rejects_is_dropped_with_a_note(tmp_path):
    # The reference only accepts even widths: halved (dim 32) runs, halved plus one (33) does not.
    problem = write(tmp_path, "even.py", """
        import torch
        batch_size = 8
        dim = 64
        class Model(torch.nn.Module):
            def forward(self, x):
                return x.view(x.shape[0], -1, 2).sum(-1)
        def get_inputs():
            return [torch.randn(batch_size, dim)]
        def get_init_inputs():
            return []
        """)
    meta = reference_step.step_reference(reference_request(str(tmp_path / "c"), problem, "derived"))
    assert [v["label"] for v in meta["shapes"]["variants"]] == ["batch_size=4, dim=32"]
    assert any("batch_size=5, dim=33 skipped: the reference rejects it" in n
               for n in meta["notes"]), meta["notes"]


def test_given_variants_in_both_forms(tmp_path):
    problem = write(tmp_path, "given.py", """
        import torch
        class Model(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.randn(dim))
            def forward(self, x):
                return x * self.weight
        def get_inputs():
            return [torch.randn(4, 16)]
        def get_init_inputs():
            return [16]
        def get_input_variants():
            return [[torch.randn(3, 16)],
                    {"label": "odd width", "inputs": [torch.randn(2, 17)], "init_inputs": [17]}]
        """)
    meta = reference_step.step_reference(reference_request(str(tmp_path / "c"), problem, "auto"))
    record = meta["shapes"]
    assert record["mode"] == "given"
    assert [v["label"] for v in record["variants"]] == ["inputs 3x16", "odd width"]
    # A given variant the reference cannot run is the problem's error, said as such.
    broken = write(tmp_path, "broken.py", open(problem).read().replace("init_inputs\": [17]",
                                                                        "init_inputs\": [18]"))
    with pytest.raises(StepError) as e:
        reference_step.step_reference(reference_request(str(tmp_path / "d"), broken, "given"))
    assert e.value.status == "problem_error" and "odd width" in e.value.message


def test_given_mode_without_get_input_variants_checks_nothing_and_says_so(tmp_path):
    meta = reference_step.step_reference(reference_request(str(tmp_path), TINY, "given"))
    assert meta["shapes"] == {"mode": "given", "variants": []}
    assert any("no get_input_variants()" in n for n in meta["notes"])


def test_the_candidate_side_records_each_variant_and_the_referee_compares(tmp_path):
    meta = reference_step.step_reference(reference_request(str(tmp_path / "c"), SCALE, "derived"))
    # Hard-codes the benchmark's batch of 8: right on batch 4 (a slice), an exception on 5.
    fixed = write(tmp_path, "fixed.py", """
        import torch
        class ModelNew(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.randn(dim))
            def forward(self, x):
                out = torch.zeros(8, x.shape[1])
                out[:x.shape[0]] = torch.addcmul(torch.zeros_like(x), x, self.weight)
                return out[:4] if x.shape[0] == 4 else out.view(x.shape[0], -1)
        """)
    request = dict(BASE, candidate=fixed, build_root=str(tmp_path / "b"),
                   inputs_dir=meta["inputs_dir"], inputs_manifest=meta["inputs_manifest"],
                   inputs_recipe=meta["inputs_recipe"],
                   reference={k: meta[k] for k in ("trials", "outputs", "output_aliases_input",
                                                   "reference_ops")})
    host = session.CandidateHost()
    assert host.load(request)["status"] == "ok"
    ran = host.shapes(dict(request, shapes=["shape_0", "shape_1"],
                           out_dir=str(tmp_path / "w" / "shapes")))
    assert ran["status"] == "ok"
    assert ran["variants"][0]["status"] == "ok"
    assert ran["variants"][1]["status"] == "runtime_error"
    assert "RuntimeError" in ran["variants"][1]["message"]
    inline = {k: meta[k] for k in ("outputs", "vacuous", "fp32", "reference_fp64_error",
                                   "fp64_trials", "reference_manifest", "expected_recipe")}
    compared = compare_step.step_compare(dict(
        BASE, reference_dir=meta["reference_dir"], reference=inline,
        actual_dir=str(tmp_path / "w"), pairs=[["shapes/shape_0", "shape_0"]],
        vacuous_rel_tol=1e-2, precision_policy="fail", precision_bound=1e-5, precision_factor=16,
        problem=SCALE, inputs_dir=meta["inputs_dir"], inputs_manifest=meta["inputs_manifest"],
        inputs_recipe=meta["inputs_recipe"]))
    # Built from the variant's init inputs under the same seed, its weight is the reference's.
    assert compared["trials"][0]["trial"] == "shape_0"
    assert compared["passed"], compared


GOOD_SCALE = """
    import torch
    class ModelNew(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(dim))
        def forward(self, x):
            return x * self.weight{wrong}
    """


@pytest.mark.parametrize("mode", ["derived", "given"])
def test_large_variants_are_kept_as_recipes_and_made_again_where_needed(tmp_path, mode):
    # Past the size limits (0 bytes here; 1 MiB inputs and 4 MiB outputs by default) a variant is
    # stored as the benchmark's trials are: its recipe and fingerprints, not its tensors.
    # The given form: shape_scale.py with variants of its own (its sizes are then not derived).
    problem = SCALE if mode == "derived" else write(
        tmp_path, "given.py", open(SCALE).read() + textwrap.dedent("""
            def get_input_variants():
                return [[torch.randn(3, 64)],
                        {"label": "odd", "inputs": [torch.randn(5, 17)], "init_inputs": [17]}]
            """))
    meta = reference_step.step_reference(dict(reference_request(str(tmp_path / "c"), problem,
                                                                mode),
                                              store_inputs_up_to=0, store_outputs_up_to=0))
    names = [v["name"] for v in meta["shapes"]["variants"]]
    assert names == ["shape_0", "shape_1"]
    stored = sorted(os.listdir(meta["inputs_dir"]))
    assert "shape_0_init.kpt" in stored and "shape_0.kpt" not in stored, stored
    assert not any(rel.startswith("expected/shape_") for rel in meta["reference_manifest"])
    assert sorted(meta["inputs_recipe"]["shapes"]) == names
    assert all("fingerprint" in r for r in meta["inputs_recipe"]["shapes"].values())

    def candidate_and_compare(source, recipe):
        request = dict(BASE, candidate=write(tmp_path, "cand.py", source),
                       build_root=str(tmp_path / "b"), inputs_dir=meta["inputs_dir"],
                       inputs_manifest=meta["inputs_manifest"], inputs_recipe=recipe,
                       reference={k: meta[k] for k in ("trials", "outputs",
                                                       "output_aliases_input", "reference_ops")})
        host = session.CandidateHost()
        assert host.load(request)["status"] == "ok"
        out = str(tmp_path / "w")
        ran = host.shapes(dict(request, shapes=names, out_dir=os.path.join(out, "shapes")))
        inline = {k: meta[k] for k in ("outputs", "vacuous", "fp32", "reference_fp64_error",
                                       "fp64_trials", "reference_manifest", "expected_recipe")}
        compared = compare_step.step_compare(dict(
            BASE, reference_dir=meta["reference_dir"], reference=inline, actual_dir=out,
            pairs=[["shapes/" + n, n] for n in names], vacuous_rel_tol=1e-2,
            precision_policy="fail", precision_bound=1e-5, precision_factor=16, problem=problem,
            inputs_dir=meta["inputs_dir"], inputs_manifest=meta["inputs_manifest"],
            inputs_recipe=meta["inputs_recipe"]))
        return ran, compared

    ran, compared = candidate_and_compare(GOOD_SCALE.format(wrong=""), meta["inputs_recipe"])
    assert [v["status"] for v in ran["variants"]] == ["ok", "ok"], ran
    assert compared["passed"], compared
    ran, compared = candidate_and_compare(GOOD_SCALE.format(wrong=" + 1"), meta["inputs_recipe"])
    assert not compared["passed"] and compared["message"].startswith("trial shape_0"), compared
    # A recipe that names other inputs than the reference step made is a changed reference.
    forged = dict(meta["inputs_recipe"], shapes={
        n: dict(r, seed=r["seed"] + 1) for n, r in meta["inputs_recipe"]["shapes"].items()})
    with pytest.raises(StepError) as e:
        candidate_and_compare(GOOD_SCALE.format(wrong=""), forged)
    assert e.value.status == "reference_changed" and "shape variant shape_0" in e.value.message
