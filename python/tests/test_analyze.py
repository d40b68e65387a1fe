"""The analyze step (Stage 1): detected operations, FLOPs, minimum bytes, dominant dtype."""

import os
import textwrap

import pytest

from kernelpro_worker import analyze_step
from kernelpro_worker.common import StepError

from conftest import ROOT


def _problem(tmp_path, body, inputs, init="[]", name="p.py"):
    """Writes a KernelBench-style problem whose Model class has `body` (indented by 4)."""
    path = tmp_path / name
    path.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n\n\n"
                    + f"def get_inputs():\n    return {inputs}\n\n\n"
                    + f"def get_init_inputs():\n    return {init}\n")
    return str(path)


def _analyze(problem, **kw):
    return analyze_step.step_analyze(dict({"device": "cpu", "problem": problem}, **kw))


def test_swish_is_two_elementwise_ops_with_estimated_flops_and_min_bytes():
    r = _analyze(os.path.join(ROOT, "problems/swish/problem.py"))
    n = 1 << 24
    assert r["status"] == "ok" and r["device"] == "cpu" and r["device_name"] is None
    assert r["categories"] == {"elementwise": {"count": 2, "flops": 2 * n}}
    assert {o["op"] for o in r["operations"]} == {"sigmoid", "mul"}
    assert r["flops"] == 2 * n and r["flops_estimated"] == 2 * n and r["flops_counted"] == 0
    assert r["min_bytes"] == 2 * n * 4  # one fp32 input read, one output written
    assert r["dominant_dtype"] == "float32" and r["dominant_category"] == "elementwise"
    assert any("estimate" in note for note in r["flops_notes"])


def test_tril_matmul_counts_the_dense_gemm():
    r = _analyze(os.path.join(ROOT, "problems/tril_matmul/problem.py"))
    n = 2048
    assert r["categories"]["gemm"] == {"count": 1, "flops": 2 * n ** 3}
    assert r["flops_counted"] == 2 * n ** 3
    assert r["categories"]["elementwise"]["count"] == 1  # tril
    assert r["min_bytes"] == 3 * n * n * 4
    assert r["dominant_category"] == "gemm" and r["dominant_dtype"] == "float32"
    assert r["executed_on"] == "meta"  # no 17 GFLOP on the CPU


def test_linear_conv_softmax_norm_reduction_are_categorised(tmp_path):
    body = """
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(32, 16)
        self.conv = nn.Conv2d(3, 8, 3, padding=1, groups=1)
        self.ln = nn.LayerNorm(16)
    def forward(self, x, img):
        y = self.ln(self.lin(x))
        z = self.conv(img)
        return torch.softmax(y, -1).sum() + z.mean() + torch.einsum('bij,bjk->bik', x, x.transpose(1, 2)).amax()
    """
    p = _problem(tmp_path, body, "[torch.randn(2, 5, 32), torch.randn(1, 3, 8, 8)]")
    r = _analyze(p)
    cats = r["categories"]
    assert cats["gemm"]["count"] == 2  # addmm (Linear) and bmm (einsum)
    assert cats["gemm"]["flops"] == 2 * 10 * 32 * 16 + 2 * 2 * 5 * 32 * 5
    assert cats["convolution"] == {"count": 1, "flops": 2 * (8 * 8 * 8) * 3 * 9}
    assert cats["softmax"]["count"] == 1 and cats["normalization"]["count"] == 1
    assert cats["reduction"]["count"] == 3  # sum, mean, amax
    params = (32 * 16 + 16) + (8 * 3 * 9 + 8) + 2 * 16
    assert r["parameter_bytes"] == params * 4
    assert r["min_bytes"] == (2 * 5 * 32 + 3 * 64) * 4 + params * 4 + 4


def test_half_precision_gemm_reports_its_dtype(tmp_path):
    body = """
    def forward(self, a, b):
        return a @ b
    """
    p = _problem(tmp_path, body, "[torch.randn(64, 32).half(), torch.randn(32, 16).half()]")
    r = _analyze(p)
    assert r["dominant_dtype"] == "float16" and r["dominant_category"] == "gemm"
    assert r["flops"] == 2 * 64 * 32 * 16
    assert r["min_bytes"] == (64 * 32 + 32 * 16 + 64 * 16) * 2


def test_meta_and_real_runs_agree_and_a_meta_failure_falls_back(tmp_path):
    body = """
    def forward(self, a, b):
        return torch.relu(a @ b)
    """
    p = _problem(tmp_path, body, "[torch.randn(64, 32), torch.randn(32, 16)]")
    meta, real = _analyze(p), _analyze(p, meta=False)
    assert meta["executed_on"] == "meta" and real["executed_on"] == "cpu"
    for key in ("flops", "min_bytes", "categories", "dominant_dtype"):
        assert meta[key] == real[key]
    # A tensor created in forward without a device cannot mix with meta tensors.
    body = """
    def forward(self, x):
        return x * torch.ones(x.shape[0]) + x.sum()
    """
    r = _analyze(_problem(tmp_path, body, "[torch.randn(128)]", name="q.py"))
    assert r["executed_on"] == "cpu" and any("meta" in n for n in r["flops_notes"])
    assert r["categories"]["elementwise"]["count"] == 2 and r["categories"]["reduction"]["count"] == 1


def test_broken_problem_is_a_problem_error(tmp_path):
    body = """
    def forward(self, x):
        raise RuntimeError("boom")
    """
    with pytest.raises(StepError) as err:
        _analyze(_problem(tmp_path, body, "[torch.randn(4)]"))
    assert err.value.status == "problem_error" and "boom" in err.value.message


# ---- Triton and CUDA programs (docs/stage1-programs.md) ----------------------------------------
#
# The adapter (programs.py) turns a program into a module with Model (the REFERENCE's, else the
# program wrapper), BaselineModel (the wrapper) and KERNELPRO_PROGRAM. These tests write such a
# module by hand. Its launcher hides its arithmetic from torch the way a Triton or CUDA launch
# does: torch.autograd.Function would still be traced, so the work happens in numpy.

_PROGRAM = '''
import numpy as np
import torch
import torch.nn as nn


def scaled_add(x, y, alpha):  # the "kernel": opaque to torch's dispatcher
    a = alpha.numpy() if isinstance(alpha, torch.Tensor) else alpha
    return torch.from_numpy(x.numpy() * a + y.numpy())


class BaselineModel(nn.Module):
    def __init__(self, *init):
        super().__init__()
        self.init = init

    def forward(self, *inputs):
        return scaled_add(*inputs, *self.init)


class Reference(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return x * self.alpha + y


Model = {model}
KERNELPRO_PROGRAM = {{"kind": "{kind}", "path": __file__, "entry": "scaled_add",
                      "reference": {reference}}}


def get_inputs():
    return [torch.randn(1024, 256), torch.randn(1024, 256)]


def get_init_inputs():
    return [{init}]
'''


def _program(tmp_path, kind="triton", reference=None, init="2.0", name="prog.py"):
    path = tmp_path / name
    model = "Reference" if reference else "BaselineModel"
    path.write_text(_PROGRAM.format(model=model, kind=kind, init=init,
                                    reference=repr(reference) if reference else "None"))
    return str(path)


def test_program_without_reference_leaves_flops_to_ncu_and_counts_the_launchers_tensors(tmp_path):
    r = _analyze(_program(tmp_path, kind="python"))
    assert r["program"] == {"kind": "python", "entry": "scaled_add", "reference": None}
    assert r["flops"] is None and r["flops_counted"] is None and r["operations"] == []
    assert r["flops_source"] == ("none: the program's kernels are opaque to torch's operator "
                                 "counter; ncu measures them")
    n = 1024 * 256 * 4
    assert (r["input_bytes"], r["parameter_bytes"], r["output_bytes"]) == (2 * n, 0, n)
    assert r["min_bytes"] == 3 * n
    assert r["executed_on"] == "cpu" and r["outputs"] == [{"shape": [1024, 256], "dtype": "float32"}]
    assert r["bytes_source"] == ("the launcher's tensors: inputs and init tensors read once, "
                                 "outputs written once (output shapes from one run of the "
                                 "program on cpu)")
    assert r["dominant_dtype"] == "float32" and r["dominant_category"] is None


def test_program_init_tensors_are_read_once(tmp_path):
    r = _analyze(_program(tmp_path, kind="python", init="torch.full((256,), 2.0)"))
    assert r["parameter_bytes"] == 256 * 4
    assert r["min_bytes"] == 3 * 1024 * 256 * 4 + 256 * 4


def test_triton_program_on_cpu_without_reference_says_its_bytes_are_unknown(tmp_path):
    # A Triton or CUDA program cannot run on cpu, and meta tensors handed to its kernels would be
    # a crash: nothing runs, and the result says what is known.
    r = _analyze(_program(tmp_path, kind="triton"))
    assert r["executed_on"] is None and r["output_bytes"] is None and r["min_bytes"] is None
    assert r["input_bytes"] == 2 * 1024 * 256 * 4 and r["outputs"] is None
    assert r["bytes_source"].startswith("unknown: a triton program runs only on the GPU it targets")
    assert "(2097152 bytes), its outputs are not" in r["bytes_source"]
    assert r["flops"] is None


def test_program_with_reference_takes_its_flops_and_output_shapes_on_meta(tmp_path):
    ref = str(tmp_path / "reference.py")
    r = _analyze(_program(tmp_path, kind="cuda", reference=ref))
    assert r["program"] == {"kind": "cuda", "entry": "scaled_add", "reference": ref}
    assert r["executed_on"] == "meta"
    assert r["flops_source"].startswith("FLOPs counted on the PyTorch reference (")
    n = 1024 * 256
    assert r["flops"] == 2 * n  # mul + add, one estimated FLOP per output element each
    assert {o["op"] for o in r["operations"]} == {"mul", "add"}
    assert (r["input_bytes"], r["output_bytes"], r["min_bytes"]) == (8 * n, 4 * n, 12 * n)
    assert r["bytes_source"].endswith("(output shapes from the PyTorch reference on meta tensors)")


def test_plain_problem_has_no_program_keys():
    r = _analyze(os.path.join(ROOT, "problems/swish/problem.py"))
    assert "program" not in r and "bytes_source" not in r
