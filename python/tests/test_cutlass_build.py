"""The build cache's CUTLASS flags: what a load_inline call of CUTLASS/CuTe code gets, the key's
CUTLASS version, and the error without a tree. The compiler is a fake that records its call."""

import os
import types

import pytest
from torch.utils import cpp_extension

from kernelpro_worker import buildcache
from kernelpro_worker.buildcache import BuildCache
from kernelpro_worker.common import StepError

KERNEL = '#include <cute/tensor.hpp>\n__global__ void k() {}\n'
PLAIN = '#include <cuda_runtime.h>\n__global__ void k() {}\n'


@pytest.fixture
def tree(tmp_path):
    """A CUTLASS tree laid out like a checkout: include/cutlass/cutlass.h, tools/util/include."""
    root = tmp_path / "cutlass"
    (root / "include" / "cutlass").mkdir(parents=True)
    (root / "include" / "cutlass" / "cutlass.h").write_text("#pragma once\n")
    (root / "tools" / "util" / "include").mkdir(parents=True)
    return {"root": str(root), "include_dir": str(root / "include"), "version": "4.2.0"}


def fake_build(tmp_path, cutlass, capability=None, monkeypatch=None):
    """A BuildCache whose compiler records each call's keyword arguments and "builds" a module.
    `capability`: the GPU's (major, minor) the flags see."""
    cache = BuildCache(str(tmp_path / "builds"), fast=False, device="cuda", cutlass=cutlass)
    calls = []

    def compiler(build_directory, **kwargs):
        calls.append(kwargs)
        so_path = os.path.join(build_directory, kwargs["name"] + ".so")
        open(so_path, "w").close()
        return types.SimpleNamespace(__file__=so_path)

    cache._real = compiler
    cache._signature = buildcache._load_inline_signature(cpp_extension.load_inline)
    if monkeypatch is not None:
        monkeypatch.setattr(buildcache, "_device_capability", lambda: capability)
    return cache, calls


def test_cutlass_code_gets_includes_std_constexpr_and_sm90a_on_hopper(tmp_path, tree, monkeypatch):
    cache, calls = fake_build(tmp_path, tree, capability=(9, 0), monkeypatch=monkeypatch)
    cache.load_inline(name="ext", cpp_sources="", cuda_sources=[KERNEL], functions=["k"],
                      extra_cuda_cflags=["-O3"])
    (call,) = calls
    util = os.path.join(tree["root"], "tools", "util", "include")
    assert call["extra_include_paths"] == [tree["include_dir"], util]
    assert call["extra_cuda_cflags"] == ["-O3", "-std=c++17", "--expt-relaxed-constexpr",
                                         "-gencode=arch=compute_90a,code=sm_90a"]
    assert cache.extensions[0]["build_notes"] == [
        f"CUTLASS 4.2.0 flags added: -I{tree['include_dir']}, -I{util}, -std=c++17, "
        "--expt-relaxed-constexpr, sm_90a"]


def test_no_sm90a_off_hopper_nor_when_the_candidate_names_an_architecture(tmp_path, tree,
                                                                          monkeypatch):
    cache, calls = fake_build(tmp_path, tree, capability=(8, 0), monkeypatch=monkeypatch)
    cache.load_inline(name="a100", cpp_sources="", cuda_sources='#include "cutlass/gemm.h"\n')
    assert "-gencode=arch=compute_90a,code=sm_90a" not in calls[0]["extra_cuda_cflags"]

    cache, calls = fake_build(tmp_path, tree, capability=(9, 0), monkeypatch=monkeypatch)
    cache.load_inline(name="own_arch", cpp_sources="", cuda_sources=KERNEL,
                      extra_cuda_cflags=["-arch=sm_90"])
    assert calls[0]["extra_cuda_cflags"] == ["-arch=sm_90", "-std=c++17",
                                             "--expt-relaxed-constexpr"]


def test_a_candidate_giving_every_flag_builds_as_it_asked(tmp_path, tree, monkeypatch):
    """Like problems/gemm_bf16/candidates/cuda_gemm_cutlass.py: its own include folder, -std,
    the constexpr flag and sm_90a; tools/util/include is not slipped in beside its tree."""
    cache, calls = fake_build(tmp_path, tree, capability=(9, 0), monkeypatch=monkeypatch)
    flags = ["-O3", "-std=c++17", "--expt-relaxed-constexpr",
             "-gencode=arch=compute_90a,code=sm_90a", "-DNDEBUG"]
    cache.load_inline(name="gemm", cpp_sources="", cuda_sources=KERNEL,
                      extra_include_paths=[tree["include_dir"]], extra_cuda_cflags=list(flags))
    assert calls[0]["extra_include_paths"] == [tree["include_dir"]]
    assert calls[0]["extra_cuda_cflags"] == flags
    assert cache.extensions[0]["build_notes"] == []


def test_a_cpp_only_extension_gets_the_include_folders_alone(tmp_path, tree, monkeypatch):
    cache, calls = fake_build(tmp_path, tree, capability=(9, 0), monkeypatch=monkeypatch)
    cache.load_inline(name="host", cpp_sources="#include <cutlass/numeric_types.h>\n",
                      extra_cflags=["-std=c++17"])
    assert calls[0]["extra_include_paths"][0] == tree["include_dir"]
    assert calls[0]["extra_cuda_cflags"] is None and calls[0]["extra_cflags"] == ["-std=c++17"]


def test_sources_without_cutlass_are_untouched_and_need_no_tree(tmp_path, monkeypatch):
    cache, calls = fake_build(tmp_path, None, capability=(9, 0), monkeypatch=monkeypatch)
    cache.load_inline(name="plain", cpp_sources="// cutlass/gemm.h is not included here\n",
                      cuda_sources=PLAIN, extra_cuda_cflags=["-O3"])
    assert calls[0]["extra_cuda_cflags"] == ["-O3"]
    assert calls[0]["extra_include_paths"] is None


def test_the_key_changes_with_the_cutlass_version(tmp_path, tree, monkeypatch):
    monkeypatch.setattr(buildcache, "_import_extension", lambda name, so_path: so_path)
    records = []
    for version in ("4.2.0", "4.2.0", "3.9.2"):
        cache, _ = fake_build(tmp_path, dict(tree, version=version), monkeypatch=monkeypatch)
        cache.load_inline(name="ext", cpp_sources="", cuda_sources=KERNEL)
        records.append(cache.extensions[0])
    # The same source against the same release is the recorded build; another release rebuilds.
    assert [r["cached"] for r in records] == [False, True, False]
    assert records[0]["key"] == records[1]["key"] != records[2]["key"]


def test_cutlass_code_without_a_tree_is_a_compile_error_before_any_build(tmp_path, monkeypatch):
    cache, calls = fake_build(tmp_path, None, capability=(9, 0), monkeypatch=monkeypatch)
    with pytest.raises(StepError) as err:
        cache.load_inline(name="ext", cpp_sources="#include <cutlass/cutlass.h>\n",
                          cuda_sources="")
    assert err.value.status == "compile_error"
    for way in ("--cutlass-dir", "KERNELPRO_CUTLASS_DIR", "scripts/setup"):
        assert way in err.value.message
    assert calls == []
