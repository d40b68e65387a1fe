"""Content-addressed builds for candidates' load_inline calls.

Candidates build their C++/CUDA code with torch.utils.cpp_extension.load_inline at import.
The worker replaces load_inline with a wrapper that puts each call's build in
BUILD_ROOT/<key>, where <key> hashes every argument of the call (sources, flags, name) and
the toolchain (torch, CUDA, compiler versions, target architectures). BUILD_ROOT is the
candidate's own build scope, chosen by the binary: CACHE/builds/<hash of the candidate file's
bytes>, so a candidate can only ever write into builds that its identical source would load. A
later import of the same source in any process loads the recorded shared object directly,
without invoking ninja or the compiler; a failed build is remembered too, so a broken candidate is
not recompiled either. Builds of one key are serialised with a file lock; different keys build in
parallel. A build runs torch's own build.ninja through fastbuild's runner (precompiled
torch/extension.h from the trusted pch step, cuda.cu with lighter torch headers where a trial
compile proves them enough, every translation unit in parallel), which hands anything it does
not understand back to ninja; what it did differently is each record's `build_notes`.

A call whose sources include CUTLASS or CuTe headers (<cute/...>, <cutlass/...>) gets the build
flags such code needs, where the call lacks them, from the tree the binary names (`cutlass`:
include_dir and version; cutlass_flags() says which); its key then includes the CUTLASS version,
so the same source against another CUTLASS release builds anew.
"""

import fcntl
import functools
import importlib.machinery
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import time

from . import fastbuild
from .common import CUDA_ON_CPU, StepError, bounded, sha256_text, write_json

MANIFEST = "kernelpro-build.json"
FAILURE = "kernelpro-build-failure.json"


@functools.lru_cache(maxsize=None)
def _tool_version(*argv):
    try:
        out = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
        return (out.stdout or out.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        return "unavailable"


def toolchain_fingerprint(with_cuda):
    import torch
    from torch.utils import cpp_extension

    parts = {
        "python": sys.version,
        "torch": torch.__version__,
        "torch_cuda": str(torch.version.cuda),
        "cxx": _tool_version(os.environ.get("CXX", "c++"), "--version"),
        "arch_list": os.environ.get("TORCH_CUDA_ARCH_LIST", ""),
    }
    if with_cuda:
        cuda_home = cpp_extension.CUDA_HOME or ""
        parts["nvcc"] = _tool_version(os.path.join(cuda_home, "bin", "nvcc"), "--version")
    return parts


# An #include of a CUTLASS or CuTe header, in angle brackets or quotes.
_CUTLASS_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?:cute|cutlass)/', re.MULTILINE)
HOPPER_ARCH = "-gencode=arch=compute_90a,code=sm_90a"
NO_TREE = ("the sources include CUTLASS/CuTe headers but kernelpro knows no CUTLASS tree: give "
           "--cutlass-dir DIR, set KERNELPRO_CUTLASS_DIR=DIR, or run scripts/setup (it installs "
           "the nvidia-cutlass wheel into .tools/cutlass)")


def uses_cutlass(call):
    """True when the call's C++ or CUDA sources (a string or a list of strings each) include a
    CUTLASS or CuTe header."""
    for key in ("cpp_sources", "cuda_sources"):
        sources = call.get(key) or []
        if isinstance(sources, str):
            sources = [sources]
        if any(isinstance(s, str) and _CUTLASS_INCLUDE.search(s) for s in sources):
            return True
    return False


def _device_capability():
    """The current CUDA device's (major, minor), or None without one."""
    import torch

    try:
        if torch.cuda.is_available():
            return tuple(torch.cuda.get_device_capability())
    except Exception:  # noqa: BLE001 - no usable device: no architecture-specific flag
        pass
    return None


def cutlass_flags(call, tree):
    """Adds to `call` (load_inline's bound arguments) what CUTLASS/CuTe code needs and the call
    lacks: the tree's include folders, -std=c++17, --expt-relaxed-constexpr, and on a GPU of
    capability 9.0 with no architecture flag given, sm_90a (WGMMA and TMA exist only there; torch
    adds no architecture flags of its own once one flag names one). Returns the note saying what
    was added ("" when nothing), or raises a compile error when no tree is known. A call that
    gives an include folder holding cutlass/cutlass.h keeps its own tree: none is added."""
    if not tree or not tree.get("include_dir"):
        raise StepError("compile_error", f"extension '{call['name']}': {NO_TREE}")
    include_dir = tree["include_dir"]
    version = tree.get("version") or "(unknown version)"
    added = []
    paths = list(call.get("extra_include_paths") or [])
    if not any(os.path.isfile(os.path.join(p, "cutlass", "cutlass.h")) for p in paths):
        util = os.path.join(os.path.dirname(include_dir), "tools", "util", "include")
        for path in [include_dir] + ([util] if os.path.isdir(util) else []):
            if path not in paths:
                paths.append(path)
                added.append("-I" + path)
        call["extra_include_paths"] = paths
    with_cuda = call.get("with_cuda")
    if with_cuda is None:
        with_cuda = bool(call.get("cuda_sources"))
    if with_cuda:  # nvcc's flags; a C++-only extension gets the include folders alone
        flags = list(call.get("extra_cuda_cflags") or [])
        if not any(f.lstrip("-").startswith("std") for f in flags):
            flags.append("-std=c++17")
            added.append("-std=c++17")
        if not any(f.lstrip("-") == "expt-relaxed-constexpr" for f in flags):
            flags.append("--expt-relaxed-constexpr")
            added.append("--expt-relaxed-constexpr")
        if (not any("arch" in f or "gencode" in f for f in flags)
                and _device_capability() == (9, 0)):
            flags.append(HOPPER_ARCH)
            added.append("sm_90a")
        call["extra_cuda_cflags"] = flags
    return f"CUTLASS {version} flags added: " + ", ".join(added) if added else ""


def _diagnostics(message):
    """Keeps what a programmer needs to fix a failed build: error lines first, bounded."""
    lines = message.splitlines()
    keep = set()
    for i, line in enumerate(lines):
        low = line.lower()
        if "error" in low or "undefined reference" in low:
            keep.update(range(max(0, i - 2), min(len(lines), i + 3)))
    picked = [lines[i] for i in sorted(keep)] if keep else lines
    return bounded("\n".join(picked), 8192)


class BuildCache:
    """Wraps load_inline; records every extension a candidate builds."""

    def __init__(self, build_root, pch=None, fast=True, device=None, cutlass=None):
        """`pch`: a fastbuild.PchOffer (precompiled headers the binary offers), or None.
        `fast`: False builds through torch's ninja call exactly as load_inline does.
        `device`: the step's device; on "cpu" an extension with CUDA sources is refused before
        torch's CUDA architecture detection fails on it with an IndexError.
        `cutlass`: the CUTLASS tree the binary located ({"include_dir", "version"}), or None."""
        self.root = os.path.abspath(build_root)
        self.cutlass = cutlass or None
        self.pch = pch
        self.fast = fast
        self.device = device
        self.extensions = []  # one dict per load_inline call, in call order
        self._real = None

    def install(self):
        """Routes torch.utils.cpp_extension.load_inline through this cache. Installing again in
        the same process (tests run several steps in one) replaces the earlier wrapper."""
        from torch.utils import cpp_extension

        real = cpp_extension.load_inline
        while hasattr(real, "__kernelpro_real__"):
            real = real.__kernelpro_real__
        self._real = real
        self._signature = _load_inline_signature(real)

        def wrapper(*args, **kwargs):
            return self.load_inline(*args, **kwargs)

        wrapper.__kernelpro_real__ = real
        cpp_extension.load_inline = wrapper

    def load_inline(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        call = dict(bound.arguments)
        call.pop("build_directory", None)
        call["verbose"] = False
        import torch

        with_cuda = call.get("with_cuda")
        if with_cuda is None:
            with_cuda = bool(call.get("cuda_sources"))
        if with_cuda and self.device == "cpu":
            raise StepError("compile_error", CUDA_ON_CPU + f" (extension '{call['name']}' has "
                            "cuda_sources)")
        cutlass_note = ""
        key_parts = {}
        if uses_cutlass(call):
            # Before the key: the flags are part of what is built, and so is the release.
            cutlass_note = cutlass_flags(call, self.cutlass)
            key_parts["cutlass"] = self.cutlass.get("version", "")
        key_parts.update({k: v for k, v in call.items() if k != "verbose"})
        key = sha256_text(json.dumps(key_parts, sort_keys=True, default=str),
                          json.dumps(toolchain_fingerprint(with_cuda), sort_keys=True))[:24]
        build_dir = os.path.join(self.root, key)
        record = {"name": call["name"], "key": key, "build_dir": build_dir}
        if cutlass_note:
            record["build_notes"] = [cutlass_note]
        # Steps after the build see the build root read-only (sandbox): what the build step made
        # is loaded without a lock, since the manifest is written atomically and last.
        module = self._cached(build_dir, record, call)
        if module is not None:
            return module
        try:
            os.makedirs(build_dir, exist_ok=True)
            lock = open(os.path.join(build_dir, ".lock"), "w")
        except OSError as e:
            raise StepError("runtime_error", f"extension '{call['name']}' was not built by the "
                            f"build step and cannot be built here ({e.strerror}): do its "
                            "load_inline arguments change from one process to the next?") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            module = self._cached(build_dir, record, call)
            if module is not None:
                return module
            manifest = os.path.join(build_dir, MANIFEST)
            failure = os.path.join(build_dir, FAILURE)
            # torch's own lock file (a FileBaton: created, then waited on while it exists) is
            # left behind by a build that was killed, and every later build of this key would
            # wait on it for good. Under our lock no other process builds here: it is stale.
            try:
                os.remove(os.path.join(build_dir, "lock"))
            except FileNotFoundError:
                pass
            start = time.monotonic()
            notes = [cutlass_note] if cutlass_note else []
            record["build_notes"] = notes
            try:
                if self.fast:
                    with fastbuild.installed(self.pch, notes):
                        module = self._real(build_directory=build_dir, **call)
                else:
                    module = self._real(build_directory=build_dir, **call)
            except Exception as e:  # noqa: BLE001 - every build failure is the candidate's
                diag = _diagnostics(str(e))
                write_json(failure, {"diagnostics": diag, "key": key})
                record.update(cached=False, failed=True, diagnostics=diag)
                self.extensions.append(record)
                raise StepError("compile_error",
                                f"build of extension '{call['name']}' failed:\n{diag}") from None
            so_path = (getattr(module, "__file__", None)
                       or os.path.join(build_dir, call["name"] + ".so"))
            seconds = time.monotonic() - start
            write_json(manifest, {"so_path": so_path, "key": key, "seconds": seconds,
                                  "toolchain": toolchain_fingerprint(with_cuda),
                                  "build_notes": notes})
            record.update(so_path=so_path, cached=False, seconds=seconds)
            self.extensions.append(record)
            return module

    def _cached(self, build_dir, record, call):
        """The recorded extension of this key (imported), or None when there is none; a recorded
        failure raises it again."""
        manifest = os.path.join(build_dir, MANIFEST)
        failure = os.path.join(build_dir, FAILURE)
        if os.path.exists(manifest):
            with open(manifest) as f:
                so_path = json.load(f)["so_path"]
            if not os.path.exists(so_path):
                # The scope seen at another path (the server's blank workers see a linked copy of
                # it, serve/candidate_pool.h): the extension is in this key's folder all the same.
                so_path = os.path.join(build_dir, os.path.basename(so_path))
            if os.path.exists(so_path):
                try:
                    os.utime(manifest)  # last used, for `kernelpro cache prune`
                except OSError:
                    pass  # the build root is read-only outside the build step
                record.update(so_path=so_path, cached=True, seconds=0.0)
                self.extensions.append(record)
                return _import_extension(call["name"], so_path)
        if os.path.exists(failure):
            with open(failure) as f:
                diag = json.load(f)["diagnostics"]
            record.update(cached=True, failed=True, diagnostics=diag)
            self.extensions.append(record)
            raise StepError("compile_error", f"build of extension '{call['name']}' failed "
                            f"(cached result):\n{diag}")
        return None


_SIGNATURE = []


def _load_inline_signature(function):
    """The signature of torch's own load_inline, taken the first time it is seen (a test may
    later replace the function with a stub of another signature)."""
    if not _SIGNATURE:
        _SIGNATURE.append(inspect.signature(function))
    return _SIGNATURE[0]


def _import_extension(name, so_path):
    loader = importlib.machinery.ExtensionFileLoader(name, so_path)
    spec = importlib.util.spec_from_file_location(name, so_path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[name] = module
    return module
