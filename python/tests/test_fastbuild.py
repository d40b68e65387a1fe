"""kernelpro's own build of load_inline's sources (fastbuild), the trusted pch step, and their
fallbacks: the built extension behaves as load_inline's, failures read the same, a precompiled
header is used only when its content hashes match."""

import os
import shutil

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
def pch_result(tmp_path_factory):
    """The pch step for the flag set the tests' builds use (no extra flags, no CUDA)."""
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


def test_cuda_without_torch_names_drops_torch_types_and_keeps_file_and_lines(tmp_path):
    path = tmp_path / "cuda.cu"
    path.write_text("#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
                    "// a torch-free kernel (torch in a comment does not count)\n"
                    "__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n")
    light = fastbuild.light_cuda_source(str(path))
    assert light.splitlines()[0] == f'#line 2 "{path}"'
    assert "torch/types.h" not in light and "__global__ void k" in light
    for uses_torch in ("torch::Tensor f(torch::Tensor x);", "at::Tensor g();",
                       "void h() { TORCH_CHECK(true); }", "#include <ATen/ATen.h>"):
        path.write_text("#include <torch/types.h>\n" + uses_torch + "\n")
        assert fastbuild.light_cuda_source(str(path)) is None, uses_torch


NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                 if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


@pytest.mark.skipif(NVCC is None, reason="no nvcc")
@pytest.mark.parametrize("needs_types", [False, True])
def test_cuda_is_tried_without_torch_types_and_falls_back_when_that_fails(tmp_path, needs_types):
    # A stand-in torch/types.h (the real one needs torch's CUDA headers): it declares kp_half.
    (tmp_path / "inc/torch").mkdir(parents=True)
    (tmp_path / "inc/torch/types.h").write_text("typedef float kp_half;\n")
    body = "kp_half" if needs_types else "float"
    source = tmp_path / "cuda.cu"
    source.write_text(f"{fastbuild.TYPES_INCLUDE}\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
                      f"__global__ void k({body}* y) {{ y[threadIdx.x] = 1.0f; }}\n")
    ninja = fastbuild.NinjaFile(
        f"nvcc = {NVCC}\ncuda_cflags = -I{tmp_path}/inc\nrule cuda_compile\n"
        f"  command = $nvcc $cuda_cflags -c $in -o $out\n"
        f"build cuda.cuda.o: cuda_compile {source}\n")
    runner = fastbuild.Runner(str(tmp_path), jobs=1)
    assert runner.build(ninja) is None, "\n".join(runner.log)
    assert (tmp_path / "cuda.cuda.o").exists()
    expected = ("the trial without torch/types.h failed" if needs_types
                else "compiled without torch/types.h")
    assert any(expected in n for n in runner.notes), runner.notes


# ----------------------------------------------------------------------------------------------
# Builds of a CPU extension


def test_the_fast_build_exports_the_same_working_function(tmp_path):
    module, record = build(tmp_path, "kp_fast_scale_add", CPP)
    assert module.scale_add(torch.ones(3), 2.0, 1.0).tolist() == [3.0, 3.0, 3.0]
    assert record["so_path"].endswith("kp_fast_scale_add.so") and not record["cached"]
    assert module.__name__ == "kp_fast_scale_add"
    # No precompiled header was offered: nothing about one, and ninja was not needed.
    assert not any("ninja" in n for n in record["build_notes"]), record["build_notes"]


def test_the_cache_key_changes_with_every_flag(tmp_path, monkeypatch):
    seen = []
    cache = buildcache.BuildCache(str(tmp_path))
    cache.install()
    monkeypatch.setattr(cache, "_real", lambda **kw: seen.append(kw["build_directory"]) or
                        (_ for _ in ()).throw(RuntimeError("error: stub")))
    for flags in ([], ["-O3"], ["-O2"], ["-O3", "-DX=1"]):
        with pytest.raises(StepError):
            cpp_extension.load_inline("kp_key", CPP, functions=["scale_add"], extra_cflags=flags)
    keys = [r["key"] for r in cache.extensions]
    assert len(set(keys)) == 4, keys


def test_a_failed_build_reads_as_load_inlines_and_is_remembered(tmp_path):
    plain, plain_record = build(tmp_path / "plain", "kp_broken_plain", BROKEN, fast=False)
    fast, fast_record = build(tmp_path / "fast", "kp_broken_fast", BROKEN)
    assert isinstance(plain, StepError) and isinstance(fast, StepError)
    assert plain.status == fast.status == "compile_error"

    def errors(record):
        text = record["diagnostics"].replace(record["build_dir"], "BUILD")
        return [line for line in text.splitlines() if "error" in line and "FAILED" not in line
                and "Error building" not in line and "ninja" not in line]

    # The compiler's own error lines are identical (the build folders differ).
    assert errors(fast_record) == errors(plain_record) != []
    assert "undefined_name" in fast_record["diagnostics"]
    assert "FAILED: main.o" in fast_record["diagnostics"]
    again, record = build(tmp_path / "fast", "kp_broken_fast", BROKEN)
    assert isinstance(again, StepError) and record["cached"] and record["failed"]


def test_an_unsupported_build_file_is_handed_back_to_ninja(tmp_path, monkeypatch):
    def refuse(self, text):
        raise fastbuild.Unsupported("test refuses every build.ninja")

    monkeypatch.setattr(fastbuild.NinjaFile, "__init__", refuse)
    module, record = build(tmp_path, "kp_via_ninja", CPP)
    assert module.scale_add(torch.zeros(2), 1.0, 4.0).tolist() == [4.0, 4.0]
    assert any("built with ninja: test refuses" in n for n in record["build_notes"])


# ----------------------------------------------------------------------------------------------
# Precompiled headers


def test_the_pch_step_makes_a_header_per_flag_set_and_reuses_it(pch_result):
    assert pch_result["status"] == "ok"
    (entry,) = pch_result["entries"]
    assert "error" not in entry and not entry["cached"], entry
    key = entry["key"]
    assert sorted(pch_result["pch_manifest"]) == [f"{key}/kp_torch_extension.h",
                                                  f"{key}/kp_torch_extension.h.gch"]
    again = pch.step_pch({"device": "cpu", "pch_dir": pch_result["pch_dir"],
                          "variants": [{"with_cuda": False, "extra_cflags": []}]})
    assert again["entries"][0]["cached"] and again["pch_manifest"] == pch_result["pch_manifest"]


def test_a_build_uses_a_matching_precompiled_header(tmp_path, pch_result):
    module, record = build(tmp_path, "kp_pch_scale_add", CPP, offer=offer_of(pch_result))
    assert module.scale_add(torch.arange(3.0), 3.0, -1.0).tolist() == [-1.0, 2.0, 5.0]
    assert "main.cpp: torch/extension.h from the precompiled header" in record["build_notes"]


def test_other_flags_build_without_the_header(tmp_path, pch_result):
    module, record = build(tmp_path, "kp_pch_o1", CPP, offer=offer_of(pch_result),
                           extra_cflags=["-O1"])
    assert module.scale_add(torch.ones(1), 1.0, 1.0).tolist() == [2.0]
    assert any("no precompiled torch/extension.h for these flags" in n
               for n in record["build_notes"]), record["build_notes"]


def test_a_tampered_precompiled_header_is_not_used(tmp_path, pch_result):
    folder = tmp_path / "pch"
    shutil.copytree(pch_result["pch_dir"], folder)
    gch = next(folder.glob("*/kp_torch_extension.h.gch"))
    with open(gch, "r+b") as f:
        f.seek(4096)
        byte = f.read(1)
        f.seek(4096)
        f.write(bytes([byte[0] ^ 0xFF]))
    module, record = build(tmp_path / "b", "kp_pch_tampered", CPP,
                           offer=offer_of(pch_result, str(folder)))
    assert module.scale_add(torch.ones(1), 2.0, 0.0).tolist() == [2.0]
    assert any("failed its content check; compiled without it" in n
               for n in record["build_notes"]), record["build_notes"]
    # The pch step notices too, and makes the header again.
    again = pch.step_pch({"device": "cpu", "pch_dir": str(folder),
                          "variants": [{"with_cuda": False, "extra_cflags": []}]})
    assert not again["entries"][0]["cached"] and "failed its content check" in again["notes"][0]
    assert sorted(again["pch_manifest"]) == sorted(pch_result["pch_manifest"])


def test_a_missing_precompiled_header_falls_back(tmp_path, pch_result):
    offer = fastbuild.PchOffer(str(tmp_path / "nowhere"), pch_result["pch_manifest"])
    module, record = build(tmp_path, "kp_pch_missing", CPP, offer=offer)
    assert module.scale_add(torch.ones(1), 1.0, 0.0).tolist() == [1.0]
    assert any("failed its content check" in n for n in record["build_notes"])
