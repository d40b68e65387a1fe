"""The trusted `pch` step: precompiled torch/extension.h headers for the candidates' builds.

Parsing torch/extension.h is most of the time g++ spends on load_inline's main.cpp. This step
makes a g++ precompiled header of it for each flag set a build is likely to use (a `variant`:
with or without CUDA, the candidate's extra_cflags), with the very flags torch's build.ninja would
give main.cpp, taken from load_inline itself (it writes build.ninja for a probe extension and the
step reads it instead of building). It imports no candidate code and runs unconfined; builds run
sandboxed and see `pch_dir` read-only, so no candidate can change a header another one uses.

Layout: `pch_dir/<key>/` holds `kp_torch_extension.h` (one line: `#include <torch/extension.h>`),
its `.gch` and `manifest.json` (the files' sha256, flags, compiler); `<key>` is
fastbuild.pch_key(compiler, normalised flags) (toolchain included). A header is made in a
temporary sibling and renamed into place under `pch_dir/<key>.lock` (a sibling left by a stopped
step is removed there); one that is already there is
used only if its files still match its manifest, otherwise it is made again. The result's
`pch_manifest` (`{"<key>/<file>": sha256}`) is what the binary passes to every build request
with `pch_dir`; the build checks the files against it before use.
"""

import fcntl
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time

from . import fastbuild
from .common import StepError, bounded, sha256_file, write_json


def default_variants(device):
    """Flag sets to prepare when the request names none: no extra flags and -O3 (what most
    candidates pass), with CUDA on a CUDA device."""
    with_cuda = device == "cuda"
    return [{"with_cuda": with_cuda, "extra_cflags": []},
            {"with_cuda": with_cuda, "extra_cflags": ["-O3"]}]


class _Captured(Exception):
    def __init__(self, ninja):
        super().__init__("captured")
        self.ninja = ninja


def variant_flags(variant, index=0):
    """(cxx, normalised flags) that torch's load_inline would give main.cpp for `variant`."""
    from torch.utils import cpp_extension

    real = cpp_extension._run_ninja_build

    def capture(build_directory, *args, **kwargs):
        with open(os.path.join(build_directory, "build.ninja")) as f:
            raise _Captured(fastbuild.NinjaFile(f.read()))

    load_inline = cpp_extension.load_inline
    while hasattr(load_inline, "__kernelpro_real__"):  # torch's own, not a BuildCache wrapper
        load_inline = load_inline.__kernelpro_real__
    probe_dir = tempfile.mkdtemp(prefix="kp-pch-probe-")
    cpp_extension._run_ninja_build = capture
    try:
        load_inline(
            name=f"kp_pch_probe_{os.getpid()}_{index}", cpp_sources="", functions=None,
            extra_cflags=list(variant.get("extra_cflags") or []),
            extra_include_paths=list(variant.get("extra_include_paths") or []),
            with_cuda=bool(variant.get("with_cuda")), build_directory=probe_dir, verbose=False)
    except _Captured as c:
        ninja = c.ninja
    else:
        raise StepError("worker_error", "load_inline built its probe instead of running ninja")
    finally:
        cpp_extension._run_ninja_build = real
        shutil.rmtree(probe_dir, ignore_errors=True)
    cxx = ninja.variables.get("cxx", "")
    flags = fastbuild.normalized_cflags(ninja.variables.get("cflags", ""),
                                        ninja.variables.get("post_cflags", ""))
    return cxx, flags


def _files_match(folder):
    try:
        with open(os.path.join(folder, "manifest.json")) as f:
            files = json.load(f)["files"]
        return files if all(sha256_file(os.path.join(folder, name)) == sha
                            for name, sha in files.items()) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def ensure_pch(pch_dir, key, cxx, flags):
    """Makes (or finds) pch_dir/<key>. Returns (files {name: sha256}, cached, note)."""
    final = os.path.join(pch_dir, key)
    os.makedirs(pch_dir, exist_ok=True)
    with open(os.path.join(pch_dir, key + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Under the lock no other step makes this key: a temporary sibling here was left by a step
        # that was stopped (its executor went).
        for left in glob.glob(glob.escape(final) + ".tmp*"):
            shutil.rmtree(left, ignore_errors=True)
        note = ""
        if os.path.isdir(final):
            files = _files_match(final)
            if files is not None:
                return files, True, ""
            note = f"the precompiled header {key} failed its content check; made again"
            shutil.rmtree(final)
        tmp = f"{final}.tmp{os.getpid()}"
        os.makedirs(tmp)
        header = fastbuild.PCH_HEADER
        with open(os.path.join(tmp, header), "w") as f:
            f.write(fastbuild.EXTENSION_INCLUDE + "\n")
        command = f"{cxx} {flags} -x c++-header {header} -o {header}.gch"
        done = subprocess.run(command, shell=True, cwd=tmp, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise StepError("compile_error", "the precompiled header did not build:\n"
                            + bounded(done.stdout.decode("utf-8", "replace"), 4000))
        files = {name: sha256_file(os.path.join(tmp, name)) for name in (header, header + ".gch")}
        write_json(os.path.join(tmp, "manifest.json"),
                   {"files": files, "cxx": cxx, "flags": flags, "key": key})
        os.rename(tmp, final)
        return files, False, note


def step_pch(request):
    """Request: `pch_dir`, `device`, optional `variants` ([{with_cuda, extra_cflags}]).
    Result: `pch_dir`, `pch_manifest`, `entries[]` (key, variant, cached, seconds, error)."""
    from .loading import import_torch

    import_torch(request.get("device", "cpu"))
    pch_dir = os.path.abspath(request["pch_dir"])
    variants = request.get("variants") or default_variants(request.get("device", "cpu"))
    manifest, entries, notes = {}, [], []
    for index, variant in enumerate(variants):
        started = time.monotonic()
        entry = {"variant": variant}
        try:
            cxx, flags = variant_flags(variant, index)
            key = fastbuild.pch_key(cxx, flags)
            entry["key"] = key
            files, cached, note = ensure_pch(pch_dir, key, cxx, flags)
            if note:
                notes.append(note)
            for name, sha in files.items():
                if name != "manifest.json":
                    manifest[f"{key}/{name}"] = sha
            entry["cached"] = cached
        except StepError as e:
            entry["error"] = e.message
        except Exception as e:  # noqa: BLE001 - one variant failing leaves the others usable
            entry["error"] = f"{type(e).__name__}: {e}"
        entry["seconds"] = time.monotonic() - started
        entries.append(entry)
    return {"status": "ok", "pch_dir": pch_dir, "pch_manifest": manifest, "entries": entries,
            "notes": notes}
