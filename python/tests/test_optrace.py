"""The torch-operator policy decided by the operators forward runs, whatever their spelling."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelpro_worker.optrace import OpTrace, allowed_aten_ops, reference_op_findings

LINEAR_REFERENCE = {"t", "addmm"}  # what nn.Linear runs on a 2-D input


def ops_of(fn, *args):
    trace = OpTrace()
    with torch.no_grad(), trace:
        fn(*args)
    return trace.ops


def messages(findings):
    return [f["message"] for f in findings]


fc = nn.Linear(8, 4)
x = torch.randn(3, 8)


def _helper(x, layer):
    return torch.addmm(layer.bias, x, layer.weight.t())


@pytest.mark.parametrize("spelling,fn,op", [
    ("nn.Linear module", lambda: fc(x), "addmm"),
    ("F.linear", lambda: F.linear(x, fc.weight, fc.bias), "addmm"),
    ("@ operator", lambda: x @ fc.weight.t() + fc.bias, "mm"),
    ("tensor method", lambda: x.matmul(fc.weight.t()).add(fc.bias), "mm"),
    ("helper function", lambda: _helper(x, fc), "addmm"),
])
def test_every_spelling_of_the_references_gemm_is_forbidden_by_name(spelling, fn, op):
    ops = ops_of(fn)
    assert op in ops, (spelling, ops)
    found = reference_op_findings(ops, LINEAR_REFERENCE, "forbid", [])
    assert len(found) == 1 and found[0]["severity"] == "fail", (spelling, found)
    assert found[0]["message"].startswith(f"forward calls aten.{op}, ")
    assert f"--allow-torch-op {op}" in found[0]["message"]


def test_a_substitute_operator_names_what_the_reference_calls():
    found = reference_op_findings({"t": 1, "mm": 1, "add": 1}, LINEAR_REFERENCE, "forbid", [])
    assert messages(found) == [
        "forward calls aten.mm, which does the reference's gemm (the reference calls aten.addmm); "
        "write the computation yourself (policy 'forbid'; allow it with --allow-torch-op mm)"]


def test_allocation_views_and_copies_are_never_forbidden():
    ops = ops_of(lambda: torch.empty_like(x).copy_(x).t().contiguous().clone().view(-1))
    reference = set(ops) | {"addmm"}
    assert reference_op_findings(ops, reference, "forbid", []) == []


def test_policy_warn_allow_and_allowed_ops():
    ops = {"sigmoid": 2, "mul": 2}
    reference = {"sigmoid", "mul"}
    assert {f["severity"] for f in reference_op_findings(ops, reference, "warn", [])} == {"warn"}
    assert reference_op_findings(ops, reference, "allow", []) == []
    assert messages(reference_op_findings(ops, reference, "forbid", ["torch.sigmoid"])) == [
        "forward calls aten.mul, an operator the reference uses; write the computation yourself "
        "(policy 'forbid'; allow it with --allow-torch-op mul)"]
    assert reference_op_findings({"mul_": 1}, reference, "forbid", ["mul"]) == []  # in-place too


def test_allowed_op_spellings_map_to_aten_names():
    assert {"mm", "addmm", "bmm"} <= allowed_aten_ops(["matmul"])
    assert {"addmm", "mm"} <= allowed_aten_ops(["nn.Linear"]) == allowed_aten_ops(["F.linear"])
    assert "sigmoid" in allowed_aten_ops(["aten.sigmoid.default"])
    assert "native_layer_norm" in allowed_aten_ops(["torch.nn.functional.layer_norm"])


def test_operators_an_extensions_cpp_calls_are_seen(tmp_path):
    """The trace is a dispatcher mode: at::sigmoid and torch::matmul from a load_inline
    extension arrive like Python's calls."""
    from torch.utils.cpp_extension import load_inline

    ext = load_inline(name="kp_test_optrace_ext", build_directory=str(tmp_path),
                      cpp_sources=r"""
#include <torch/extension.h>
torch::Tensor run(torch::Tensor x, torch::Tensor w) {
  auto y = torch::empty_like(x);
  y.copy_(at::sigmoid(x));
  return torch::matmul(y, w);
}
""", functions=["run"], extra_cflags=["-O0"])
    ops = ops_of(ext.run, torch.randn(4, 8), torch.randn(8, 2))
    assert {"empty_like", "sigmoid", "copy_", "mm"} <= set(ops), ops
    found = messages(reference_op_findings(ops, {"sigmoid", "mul"}, "forbid", []))
    assert len(found) == 1 and found[0].startswith("forward calls aten.sigmoid, "), found
