"""kernelpro's own build of load_inline's sources (fastbuild), the trusted pch step, and their
fallbacks: the built extension behaves as load_inline's, failures read the same, a precompiled
header is used only when its content hashes match, cuda.cu gets lighter torch headers only when a
trial compile proves it.

Parsing torch's real headers costs g++ ~20 s a translation unit here, so only two things do: one
precompiled torch/extension.h (module-scoped) and a load_inline build that uses it. Every
other behaviour is tested on torch-like build.ninja files whose torch/extension.h and
torch/types.h are small stand-ins: the runner treats them exactly as it treats torch's."""

import os
import shutil
import subprocess

import pytest
import torch
from torch.utils import cpp_extension

from kernelpro_worker import buildcache, fastbuild, pch
from kernelpro_worker.common import StepError

CPP = """
torch::Tensor scale_add(torch::Tensor x, double a, double b) { return x * a + b; }
"""
BROKEN = """
torch::Tensor scale_add(torch::Tensor x, double a, double b) { return x * a + undefined_name; }
"""


def build(root, name, source, offer=None, fast=True, **kwargs):
    """One load_inline call through a BuildCache; returns (module or StepError, its record)."""
    cache = buildcache.BuildCache(str(root), pch=offer, fast=fast)
    cache.install()
    try:
        module = cpp_extension.load_inline(name, source, functions=["scale_add"], **kwargs)
    except StepError as e:
        module = e
    return module, cache.extensions[-1]


@pytest.fixture(scope="module")
def real_pch(tmp_path_factory):
    """The pch step for the flag set the real builds use (no extra flags, no CUDA)."""
    folder = tmp_path_factory.mktemp("pch")
    return pch.step_pch({"device": "cpu", "pch_dir": str(folder),
                         "variants": [{"with_cuda": False, "extra_cflags": []}]})


def offer_of(result, folder=None):
    return fastbuild.PchOffer(folder or result["pch_dir"], result["pch_manifest"])


# ----------------------------------------------------------------------------------------------
# build.ninja


TORCH_LIKE = """ninja_required_version = 1.3
cxx = c++
cflags = -DTORCH_EXTENSION_NAME=ext -DPYBIND11_COMPILER_TYPE=\\"_gcc\\" -isystem /inc -fPIC
post_cflags =
ldflags = -shared -L/lib $
  -lc10

rule compile
  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags
  depfile = $out.d
  deps = gcc

rule link
  command = $cxx $in $ldflags -o $out

build main.o: compile /b/main.cpp
build ext.so: link main.o

default ext.so
"""


def test_ninja_file_gives_torchs_commands_with_variables_expanded():
    ninja = fastbuild.NinjaFile(TORCH_LIKE)
    compile_edge, link_edge = ninja.edges
    assert ninja.command(compile_edge) == (
        'c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=ext -DPYBIND11_COMPILER_TYPE=\\"_gcc\\" '
        "-isystem /inc -fPIC -c /b/main.cpp -o main.o ")
    assert ninja.command(link_edge) == "c++ main.o -shared -L/lib -lc10 -o ext.so"
    assert link_edge["deps"] == ["main.o"] and ninja.defaults == ["ext.so"]


def test_a_ninja_file_with_statements_it_does_not_know_is_refused():
    with pytest.raises(fastbuild.Unsupported):
        fastbuild.NinjaFile(TORCH_LIKE + "subninja other.ninja\n")


def test_the_precompiled_header_key_ignores_the_extension_name_only():
    a = fastbuild.normalized_cflags("-DTORCH_EXTENSION_NAME=a -fPIC  -std=c++17", "")
    b = fastbuild.normalized_cflags("-DTORCH_EXTENSION_NAME=b -fPIC -std=c++17", " ")
    assert a == b == "-fPIC -std=c++17"
    assert fastbuild.pch_key("c++", a) != fastbuild.pch_key("c++", a + " -O3")
    assert fastbuild.pch_key("c++", a) != fastbuild.pch_key("g++-12", a)


def test_the_cache_key_changes_with_every_flag(tmp_path, monkeypatch):
    cache = buildcache.BuildCache(str(tmp_path))
    cache.install()
    monkeypatch.setattr(cache, "_real", lambda **kw: (_ for _ in ()).throw(
        RuntimeError("error: stub")))
    for flags in ([], ["-O3"], ["-O2"], ["-O3", "-DX=1"]):
        with pytest.raises(StepError):
            cpp_extension.load_inline("kp_key", CPP, functions=["scale_add"], extra_cflags=flags)
    keys = [r["key"] for r in cache.extensions]
    assert len(set(keys)) == 4, keys


# ----------------------------------------------------------------------------------------------
# A torch-like extension on stand-in headers: main.cpp starts with `#include <torch/extension.h>`
# and is compiled and linked with the rules torch writes.

STUB_EXTENSION_H = """#pragma once
#include <string>
namespace torch { inline int stub_answer() { return 42; } }
"""


class StubExtension:
    """A build folder with main.cpp and a torch-like build.ninja whose -isystem folder holds a
    stand-in torch/extension.h."""

    def __init__(self, folder, body, name="kp_stub", extra_cflags=""):
        self.dir = str(folder)
        self.include = os.path.join(self.dir, "inc")
        os.makedirs(os.path.join(self.include, "torch"))
        with open(os.path.join(self.include, "torch", "extension.h"), "w") as f:
            f.write(STUB_EXTENSION_H)
        with open(os.path.join(self.dir, "main.cpp"), "w") as f:
            f.write(fastbuild.EXTENSION_INCLUDE + "\n" + body)
        self.cxx = "c++"
        self.cflags = (f"-DTORCH_EXTENSION_NAME={name} -isystem {self.include} -fPIC -std=c++17"
                       + extra_cflags)
        self.so = os.path.join(self.dir, name + ".so")
        with open(os.path.join(self.dir, "build.ninja"), "w") as f:
            f.write(f"ninja_required_version = 1.3\ncxx = {self.cxx}\ncflags = {self.cflags}\n"
                    "post_cflags =\nldflags = -shared\n\n"
                    "rule compile\n  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out "
                    "$post_cflags\n  depfile = $out.d\n  deps = gcc\n\n"
                    "rule link\n  command = $cxx $in $ldflags -o $out\n\n"
                    f"build main.o: compile {self.dir}/main.cpp\n"
                    f"build {name}.so: link main.o\n\ndefault {name}.so\n")

    def key(self):
        return fastbuild.pch_key(self.cxx, fastbuild.normalized_cflags(self.cflags, ""))

    def make_pch(self, pch_dir):
        """The pch step's work for these flags; returns the offer the binary would pass."""
        files, _, _ = pch.ensure_pch(str(pch_dir), self.key(), self.cxx,
                                     fastbuild.normalized_cflags(self.cflags, ""))
        return fastbuild.PchOffer(str(pch_dir), {f"{self.key()}/{n}": sha
                                                 for n, sha in files.items()
                                                 if n != "manifest.json"})

    def build(self, offer=None):
        """Builds through fastbuild as a BuildCache would; returns (error text or None, notes)."""
        notes = []
        with fastbuild.installed(offer, notes):
            try:
                cpp_extension._run_ninja_build(self.dir, False, "Error building extension")
            except RuntimeError as e:
                return str(e), notes
        return None, notes


GOOD_BODY = "int kp_answer() { return torch::stub_answer(); }\n"
BROKEN_BODY = "int kp_answer() { return torch::stub_answer() + undefined_name; }\n"


def test_a_matching_precompiled_header_is_force_included(tmp_path):
    ext = StubExtension(tmp_path / "b", GOOD_BODY)
    error, notes = ext.build(ext.make_pch(tmp_path / "pch"))
    assert error is None and os.path.exists(ext.so)
    assert "main.cpp: torch/extension.h from the precompiled header" in notes


def test_a_failure_reads_as_torchs_ninja_run_with_or_without_a_header(tmp_path):
    plain = StubExtension(tmp_path / "plain", BROKEN_BODY)
    fast = StubExtension(tmp_path / "fast", BROKEN_BODY)
    with pytest.raises(RuntimeError) as ninja_error:
        cpp_extension._run_ninja_build(plain.dir, False, "Error building extension")
    fast_error, notes = fast.build(fast.make_pch(tmp_path / "pch"))
    assert "main.cpp: torch/extension.h from the precompiled header" in notes

    def errors(text, ext):
        text = text.replace(ext.dir, "BUILD")
        return [line for line in text.splitlines() if "error" in line and "FAILED" not in line
                and not line.startswith("Error building") and "ninja" not in line]

    # The compiler's own lines are identical; ninja's framing too.
    assert errors(fast_error, fast) == errors(str(ninja_error.value), plain) != []
    assert "undefined_name" in fast_error
    assert fast_error.startswith("Error building extension: ")
    assert "FAILED: main.o" in fast_error
    assert "ninja: build stopped: subcommand failed." in fast_error


def test_a_failed_build_is_a_compile_error_with_the_compilers_lines_and_is_remembered(
        tmp_path, monkeypatch):
    error, _ = StubExtension(tmp_path / "b", BROKEN_BODY).build()
    calls = []

    def fail(**kwargs):  # load_inline, failing the way fastbuild fails
        calls.append(kwargs["name"])
        raise RuntimeError(error)

    cache = buildcache.BuildCache(str(tmp_path / "builds"))
    cache.install()
    monkeypatch.setattr(cache, "_real", fail)
    for attempt in range(2):
        with pytest.raises(StepError) as failed:
            cpp_extension.load_inline("kp_broken", CPP, functions=["scale_add"])
        assert failed.value.status == "compile_error"
        record = cache.extensions[-1]
        assert record["failed"] and record["cached"] == (attempt == 1)
        assert "undefined_name" in record["diagnostics"]
    assert calls == ["kp_broken"]  # the second import did not compile again


def test_an_unsupported_build_file_is_handed_back_to_torchs_ninja_run(tmp_path, monkeypatch):
    def refuse(self, text):
        raise fastbuild.Unsupported("test refuses every build.ninja")

    monkeypatch.setattr(fastbuild.NinjaFile, "__init__", refuse)
    ext = StubExtension(tmp_path, GOOD_BODY)
    error, notes = ext.build()
    assert error is None and os.path.exists(ext.so)
    assert any("built with ninja: test refuses" in n for n in notes), notes


def test_other_flags_compile_without_a_header(tmp_path):
    made = StubExtension(tmp_path / "a", GOOD_BODY)
    offer = made.make_pch(tmp_path / "pch")
    other = StubExtension(tmp_path / "b", GOOD_BODY, extra_cflags=" -O1")
    error, notes = other.build(offer)
    assert error is None and os.path.exists(other.so)
    assert any("no precompiled torch/extension.h for these flags" in n for n in notes), notes


def test_a_tampered_precompiled_header_is_not_used_and_the_pch_step_makes_it_again(tmp_path):
    ext = StubExtension(tmp_path / "b", GOOD_BODY)
    offer = ext.make_pch(tmp_path / "pch")
    gch = tmp_path / "pch" / ext.key() / (fastbuild.PCH_HEADER + ".gch")
    with open(gch, "r+b") as f:
        f.seek(64)
        byte = f.read(1)
        f.seek(64)
        f.write(bytes([byte[0] ^ 0xFF]))
    error, notes = ext.build(offer)
    assert error is None and os.path.exists(ext.so)
    assert any("failed its content check; compiled without it" in n for n in notes), notes
    # The next pch step notices, makes the header again, and builds use it.
    files, cached, note = pch.ensure_pch(str(tmp_path / "pch"), ext.key(), ext.cxx,
                                         fastbuild.normalized_cflags(ext.cflags, ""))
    assert not cached and "failed its content check; made again" in note
    again = fastbuild.PchOffer(str(tmp_path / "pch"), {f"{ext.key()}/{n}": sha
                                                       for n, sha in files.items()
                                                       if n != "manifest.json"})
    error, notes = ext.build(again)
    assert error is None and "main.cpp: torch/extension.h from the precompiled header" in notes


def test_what_a_stopped_pch_step_left_half_made_is_removed_by_the_next(tmp_path):
    # A step stopped while g++ ran (its run ended first) leaves its temporary sibling; the next
    # step for that key removes it, whether it makes the header or finds it made.
    pch_dir = tmp_path / "pch"
    left = pch_dir / "k.tmp4242"
    left.mkdir(parents=True)
    (left / "kp_torch_extension.h.gch").write_text("half")
    fake_cxx = f"touch {fastbuild.PCH_HEADER}.gch; true"  # "compiles" without g++
    files, cached, _ = pch.ensure_pch(str(pch_dir), "k", fake_cxx, "")
    assert not cached and set(files) == {fastbuild.PCH_HEADER, fastbuild.PCH_HEADER + ".gch"}
    assert sorted(os.listdir(pch_dir)) == ["k", "k.lock"]
    (pch_dir / "k.tmp99").mkdir()
    _, cached, _ = pch.ensure_pch(str(pch_dir), "k", fake_cxx, "")
    assert cached and sorted(os.listdir(pch_dir)) == ["k", "k.lock"]


def test_a_missing_precompiled_header_falls_back(tmp_path):
    ext = StubExtension(tmp_path / "b", GOOD_BODY)
    manifest = ext.make_pch(tmp_path / "pch").manifest
    error, notes = ext.build(fastbuild.PchOffer(str(tmp_path / "nowhere"), manifest))
    assert error is None and os.path.exists(ext.so)
    assert any("failed its content check" in n for n in notes), notes


# ----------------------------------------------------------------------------------------------
# cuda.cu: which lighter headers the scan allows


def cuda_cu(path, candidate):
    """cuda.cu as load_inline writes it around the candidate's CUDA."""
    path.write_text(f"{fastbuild.TYPES_INCLUDE}\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
                    + candidate)
    return str(path)


SWISH_LIKE = """#include <cstdint>
__global__ void swish_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / (1.0f + __expf(-x[i]));
}
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
torch::Tensor swish_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  swish_kernel<<<(x.numel() + 255) / 256, 256, 0, stream>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
"""


def test_cuda_without_torch_names_drops_torch_types_and_keeps_file_and_lines(tmp_path):
    path = cuda_cu(tmp_path / "cuda.cu", "// a torch-free kernel (torch in a comment does not "
                   "count)\n__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n")
    light = fastbuild.light_cuda_source(path)
    assert light.splitlines()[0] == f'#line 2 "{path}"'
    assert "torch/types.h" not in light and "__global__ void k" in light
    for uses_torch in ("torch::Tensor f(torch::Tensor x);", "at::Tensor g();",
                       "void h() { TORCH_CHECK(true); }", "#include <ATen/ATen.h>"):
        cuda_cu(tmp_path / "cuda.cu", uses_torch + "\n")
        assert fastbuild.light_cuda_source(path) is None, uses_torch


def test_cuda_using_only_tensors_aten_and_cuda_helpers_gets_torch_types_not_extension(tmp_path):
    path = cuda_cu(tmp_path / "cuda.cu", SWISH_LIKE)
    light = fastbuild.types_only_cuda_source(path)
    lines = light.splitlines()
    assert lines[0] == f'#line 1 "{path}"' and lines[1] == fastbuild.TYPES_INCLUDE
    assert "torch/extension.h" not in light
    # Every other line as written, on its own line number.
    original = open(path).read().splitlines()
    assert len(lines) - 1 == len(original)
    changed = [i for i, (a, b) in enumerate(zip(original, lines[1:])) if a != b]
    assert [original[i] for i in changed] == [fastbuild.EXTENSION_INCLUDE]
    assert lines[1 + changed[0]] == ""
    assert fastbuild.light_cuda_source(path) is None  # it does name torch's


@pytest.mark.parametrize("needs_more", [
    "PYBIND11_MODULE(m, mod) {}",
    "namespace py = pybind11;",
    "void f(py::object o);",
    "torch::nn::Linear layer(1, 1);",
    "using namespace torch; nn::Linear layer(1, 1);",
    "struct F : torch::autograd::Function<F> {};",
    "void f() { torch::cuda::synchronize(); }",
    "void f() { torch :: NoGradGuard g; }",
    "#include <torch/torch.h>",
    '#include "torch/python.h"',
])
def test_cuda_that_may_need_more_than_torch_types_keeps_torch_extension(tmp_path, needs_more):
    path = cuda_cu(tmp_path / "cuda.cu", SWISH_LIKE + needs_more + "\n")
    assert fastbuild.types_only_cuda_source(path) is None


def test_cuda_without_torch_extension_or_with_it_only_in_a_comment_is_left_alone(tmp_path):
    path = cuda_cu(tmp_path / "cuda.cu", SWISH_LIKE.replace(fastbuild.EXTENSION_INCLUDE,
                                                            "#include <ATen/ATen.h>"))
    assert fastbuild.types_only_cuda_source(path) is None
    path = cuda_cu(tmp_path / "cuda.cu",
                   "// #include <torch/extension.h>\n__global__ void k() {}\n")
    assert fastbuild.types_only_cuda_source(path) is None


# ----------------------------------------------------------------------------------------------
# cuda.cu: the trial compile with nvcc (stand-in torch headers: torch 1.13's CPU build lacks
# c10/cuda's generated headers, and a real torch/extension.h costs nvcc minutes here)

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                 if os.path.exists("/usr/local/cuda/bin/nvcc") else None)

# The stand-in torch/extension.h adds, like torch's, something torch/types.h lacks.
STUB_TYPES_H = "#pragma once\ntypedef float kp_half;\n"
STUB_FULL_EXTENSION_H = ("#pragma once\n#include <torch/types.h>\n"
                         "__host__ __device__ inline float kp_only_in_extension() "
                         "{ return 2.0f; }\n")
# With static_asserts on __LINE__ and __FILE__: proves the trial keeps cuda.cu's name and line
# numbers (the candidate's CUDA starts on line 4 of cuda.cu).
WHERE = ('constexpr bool kp_ends_with(const char* s, const char* e, int n, int m) {\n'
         '  return m < 0 || (n >= 0 && s[n] == e[m] && kp_ends_with(s, e, n - 1, m - 1)); }\n')


@pytest.mark.skipif(NVCC is None, reason="no nvcc")
@pytest.mark.parametrize("candidate,expected", [
    ("__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n",
     "cuda.cu: compiled without torch/types.h"),
    ("__global__ void k(kp_half* y) { y[threadIdx.x] = 1.0f; }\n",
     "cuda.cu: the trial without torch/types.h failed; compiled as written"),
    ("static_assert(__LINE__ == 4, \"line\");\n#include <torch/extension.h>\n"
     "static_assert(__LINE__ == 6, \"line\");\n" + WHERE +
     "static_assert(kp_ends_with(__FILE__, \"/cuda.cu\", sizeof(__FILE__) - 2, 7), \"file\");\n"
     "__global__ void k(kp_half* y) { y[threadIdx.x] = 1.0f; }\n",
     "cuda.cu: compiled with torch/types.h instead of torch/extension.h"),
    ("#include <torch/extension.h>\n"
     "__global__ void k(float* y) { y[threadIdx.x] = kp_only_in_extension(); }\n",
     "cuda.cu: the trial with torch/types.h instead of torch/extension.h failed; compiled as "
     "written"),
], ids=["no-torch", "no-torch-fails", "types-only", "types-only-fails"])
def test_cuda_is_tried_with_lighter_headers_and_falls_back_when_that_fails(tmp_path, candidate,
                                                                           expected):
    (tmp_path / "inc/torch").mkdir(parents=True)
    (tmp_path / "inc/torch/types.h").write_text(STUB_TYPES_H)
    (tmp_path / "inc/torch/extension.h").write_text(STUB_FULL_EXTENSION_H)
    source = cuda_cu(tmp_path / "cuda.cu", candidate)
    ninja = fastbuild.NinjaFile(
        f"nvcc = {NVCC}\ncuda_cflags = -I{tmp_path}/inc -std=c++17\nrule cuda_compile\n"
        f"  command = $nvcc $cuda_cflags -c $in -o $out\n"
        f"build cuda.cuda.o: cuda_compile {source}\n")
    runner = fastbuild.Runner(str(tmp_path), jobs=1)
    assert runner.build(ninja) is None, "\n".join(runner.log)
    assert (tmp_path / "cuda.cuda.o").exists()
    assert any(n.startswith(expected) for n in runner.notes), runner.notes
    # The kernel is the candidate's either way.
    symbols = subprocess.run(["nm", "-C", str(tmp_path / "cuda.cuda.o")], capture_output=True,
                             text=True).stdout
    assert "k(" in symbols


# ----------------------------------------------------------------------------------------------
# The real thing: torch's headers, one precompiled header, a load_inline build that uses it


def test_the_pch_step_makes_a_header_per_flag_set_and_reuses_it(real_pch):
    assert real_pch["status"] == "ok"
    (entry,) = real_pch["entries"]
    assert "error" not in entry and not entry["cached"], entry
    key = entry["key"]
    assert sorted(real_pch["pch_manifest"]) == [f"{key}/kp_torch_extension.h",
                                                f"{key}/kp_torch_extension.h.gch"]
    again = pch.step_pch({"device": "cpu", "pch_dir": real_pch["pch_dir"],
                          "variants": [{"with_cuda": False, "extra_cflags": []}]})
    assert again["entries"][0]["cached"] and again["pch_manifest"] == real_pch["pch_manifest"]


def test_a_load_inline_build_uses_the_header_and_exports_the_same_working_module(tmp_path,
                                                                                  real_pch):
    module, record = build(tmp_path, "kp_pch_scale_add", CPP, offer=offer_of(real_pch))
    assert module.scale_add(torch.arange(3.0), 3.0, -1.0).tolist() == [-1.0, 2.0, 5.0]
    assert module.__name__ == "kp_pch_scale_add"
    assert record["so_path"].endswith("kp_pch_scale_add.so") and not record["cached"]
    assert "main.cpp: torch/extension.h from the precompiled header" in record["build_notes"]
    assert not any("ninja" in n for n in record["build_notes"]), record["build_notes"]


def test_a_build_scope_seen_at_another_path_loads_the_extension_of_its_own_folder(
        tmp_path, monkeypatch):
    """The server's blank workers see a linked copy of a candidate's build scope at another path
    (serve/candidate_pool.h): the manifest's absolute path is not there, the same file name in
    the key's folder is."""
    key_dir = tmp_path / "copy" / "k1"
    key_dir.mkdir(parents=True)
    (key_dir / "ext.so").write_bytes(b"")
    (key_dir / buildcache.MANIFEST).write_text(
        '{"so_path": "/elsewhere/builds/abc/k1/ext.so", "key": "k1"}')
    loaded = []
    monkeypatch.setattr(buildcache, "_import_extension",
                        lambda name, path: loaded.append(path) or "module")
    cache = buildcache.BuildCache(str(tmp_path / "copy"))
    record = {"name": "ext", "key": "k1", "build_dir": str(key_dir)}
    assert cache._cached(str(key_dir), record, {"name": "ext"}) == "module"
    assert loaded == [str(key_dir / "ext.so")]
    assert record["cached"] is True
