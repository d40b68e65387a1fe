"""Static checks: what a user sees when a candidate cheats in its source."""

import os

from kernelpro_worker.scan import scan_candidate, scan_problem

from conftest import ROOT


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def fails(result):
    return [f for f in result["findings"] if f["severity"] == "fail"]


def test_reference_ops_of_the_example_problems():
    assert scan_problem(read("problems/swish/problem.py"))["reference_ops"] == ["sigmoid"]
    assert set(scan_problem(read("problems/rms_norm/problem.py"))["reference_ops"]) == {"pow", "mean", "rsqrt"}
    assert set(scan_problem(read("problems/linear_gelu/problem.py"))["reference_ops"]) == {"nn.Linear", "gelu", "clamp"}
    assert set(scan_problem(read("problems/tiny_mlp/problem.py"))["reference_ops"]) == {"nn.Linear", "relu"}
    assert set(scan_problem(read("problems/tril_matmul/problem.py"))["reference_ops"]) == {"matmul", "tril"}


def test_broken_problems_are_reported():
    assert "syntax error" in scan_problem("class Model(:\n")["error"]
    assert "get_inputs" in scan_problem("class Model: pass\ndef get_init_inputs(): return []\n")["error"]


SWISH_OPS = {"sigmoid"}


def test_calling_the_reference_operator_fails_with_a_fix_hint():
    src = "import torch\nclass ModelNew:\n    def forward(self, x):\n        return x * torch.sigmoid(x)\n"
    result = scan_candidate(src, SWISH_OPS)
    assert "torch.sigmoid" not in result["message"]  # names the op, not the spelling
    assert "calls sigmoid (line 4)" in result["message"]
    assert "--allow-torch-op sigmoid" in result["message"]
    assert scan_candidate(src, SWISH_OPS, policy="warn")["message"] == ""
    assert scan_candidate(src, SWISH_OPS, allowed_ops=["sigmoid"])["findings"] == []
    assert scan_candidate(src, SWISH_OPS, policy="allow")["findings"] == []


def test_module_calls_and_matmul_operator_count_as_reference_ops():
    src = ("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def __init__(self):\n"
           "        self.linear = nn.Linear(4, 4)\n    def forward(self, x, w):\n"
           "        return self.linear(x) + x @ w\n")
    rules = {f["message"].split(" (")[0] for f in fails(scan_candidate(src, {"nn.Linear", "matmul"}))}
    assert rules == {"calls nn.Linear", "calls matmul"}


def test_parameters_drawn_in_init_are_not_computation():
    src = ("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self, h):\n"
           "        super().__init__()\n        self.w = torch.nn.Parameter(torch.randn(h))\n"
           "    def forward(self, x):\n        return ext.run(x.contiguous(), self.w)\n")
    assert scan_candidate(src, {"randn", "pow"})["findings"] == []


def test_syntax_error_and_missing_modelnew_are_compile_errors():
    assert scan_candidate("def f(:\n", set())["status"] == "compile_error"
    result = scan_candidate("class Model_New: pass\n", set())
    assert result["status"] == "compile_error" and "ModelNew" in result["message"]


def test_patching_and_introspection_fail():
    for src, word in [
        ("import torch\ntorch.cuda.synchronize = lambda: None\nclass ModelNew: pass\n", "torch.cuda.synchronize"),
        ("import time\ntime.perf_counter = lambda: 0.0\nclass ModelNew: pass\n", "time.perf_counter"),
        ("import torch\nsetattr(torch, 'allclose', None)\nclass ModelNew: pass\n", "setattr"),
        ("import gc\nobjs = gc.get_objects()\nclass ModelNew: pass\n", "gc.get_objects"),
        ("class ModelNew: pass\nimport sys\nM = sys.modules['x'].Model\n", "Model"),
    ]:
        result = scan_candidate(src, set())
        assert fails(result), src
        assert word in result["message"], (src, result["message"])


def test_unjoined_side_stream_fails_and_joined_one_warns():
    unjoined = 'class ModelNew: pass\nSRC = "cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);"\n'
    assert fails(scan_candidate(unjoined, set()))[0]["rule"] == "side_stream"
    joined = unjoined + 'J = "cudaEventRecord(e, s); cudaStreamWaitEvent(cur, e, 0);"\n'
    result = scan_candidate(joined, set())
    assert not fails(result) and result["findings"][0]["severity"] == "warn"


def test_reduced_precision_in_fp32_problem_is_reported_not_failed():
    src = 'class ModelNew: pass\nSRC = "__half h = __float2half(x);"\n'
    result = scan_candidate(src, set(), fp32_problem=True)
    assert result["findings"][0]["rule"] == "precision" and not fails(result)
    assert scan_candidate(src, set(), fp32_problem=False)["findings"] == []


def _shipped_problems():
    """problems/NAME (problem.py) and problems/{triton,cuda}/NAME (programs whose PyTorch
    reference.py gives the ops a candidate must not call), each with the file to scan."""
    found = []
    for problem in sorted(os.listdir(os.path.join(ROOT, "problems"))):
        if os.path.isfile(os.path.join(ROOT, "problems", problem, "problem.py")):
            found.append((problem, f"problems/{problem}/problem.py"))
    for kind in ("triton", "cuda"):
        for name in sorted(os.listdir(os.path.join(ROOT, "problems", kind))):
            found.append((f"{kind}/{name}", f"problems/{kind}/{name}/reference.py"))
    return found


def test_every_shipped_cuda_candidate_passes_the_static_checks():
    problems = _shipped_problems()
    assert any(p.startswith("triton/") for p, _ in problems) and any(p.startswith("cuda/") for p, _ in problems)
    for problem, source in problems:
        pdir = os.path.join(ROOT, "problems", problem)
        ops = set(scan_problem(read(source))["reference_ops"])
        for name in sorted(n for n in os.listdir(os.path.join(pdir, "candidates")) if n.endswith(".py")):
            result = scan_candidate(read(f"problems/{problem}/candidates/{name}"), ops)
            assert result["status"] == "ok" and not fails(result), (problem, name, result)


def test_calls_into_the_candidates_own_extension_are_not_reference_ops():
    src = ("from torch.utils.cpp_extension import load_inline\n_ext = load_inline(name='e', cpp_sources='')\n"
           "class ModelNew:\n    def __init__(self):\n        self.ext = load_inline(name='f', cpp_sources='')\n"
           "    def forward(self, x):\n        return _ext.relu(self.ext.relu(x))\n")
    assert scan_candidate(src, {"relu"})["findings"] == []
    assert fails(scan_candidate(src.replace("_ext.relu(self.ext.relu(x))", "x.relu()"), {"relu"}))


def test_touching_the_dispatch_mode_machinery_fails():
    for code in ("torch._C._DisableTorchDispatch()",
                 "from torch.utils._python_dispatch import _pop_mode_temporarily",
                 "torch._C._set_torch_dispatch_mode(None)",
                 "torch._C._unset_dispatch_mode(0)"):
        src = f"import torch\nclass ModelNew:\n    def forward(self, x):\n        {code}\n        return x\n"
        found = [f for f in fails(scan_candidate(src, set())) if f["rule"] == "trace_tampering"]
        assert len(found) == 1 and "(line 4)" in found[0]["message"], code
    cpp = ('import torch\n_CPP = """\nc10::impl::ExcludeDispatchKeyGuard g(c10::DispatchKey::Python);\n"""\n'
           "class ModelNew:\n    def forward(self, x):\n        return x\n")
    found = [f for f in fails(scan_candidate(cpp, set())) if f["rule"] == "trace_tampering"]
    assert found and "ExcludeDispatchKeyGuard (line 3)" in found[0]["message"]
    assert fails(scan_candidate(read("tests/candidates/good/cpu_tiny_swish.py"), {"sigmoid"})) == []
