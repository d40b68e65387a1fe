"""Importing a candidate into this process, and the `build` step (which is that import).

The candidate is imported with the build cache installed and the patch guard's snapshot taken
first; only the candidate's own processes import this module's loaders (build, check, run,
trace, energy, the candidate session), never the referee's. What a candidate's process is told:
the inputs tree (CACHE/inputs/<key>), the reference's metadata inline, its own build scope and its
output directory; never where the reference's expected outputs are (CACHE/references/<key>) or
the cache as a whole.
"""

import time
import traceback

from . import optrace, plain
from .common import CUDA_ON_CPU, StepError, bounded, load_module
from .loading import classify_runtime, construct, import_torch, read_input


def build_cache(request):
    """The build cache of a candidate's process: its build scope, the precompiled headers the
    binary offers (`pch_dir`, `pch_manifest` from the pch step), `fast_build` (default true;
    false builds through ninja exactly as load_inline does) and `cutlass`, the CUTLASS tree
    ({"include_dir", "version"}) that sources including CUTLASS/CuTe build against."""
    from .buildcache import BuildCache
    from .fastbuild import PchOffer

    pch = PchOffer(request.get("pch_dir", ""), request.get("pch_manifest"))
    return BuildCache(request["build_root"], pch=pch, fast=request.get("fast_build", True),
                      device=request.get("device"), cutlass=request.get("cutlass"))


def import_candidate(request, torch, guard_holder, cache=None):
    """Imports the candidate with the build cache installed. Returns (module, build cache).
    A caller that passes its own `cache` still sees what was built when the import fails."""
    from .guard import PatchGuard

    cache = cache or build_cache(request)
    cache.install()
    optrace.OpTrace()  # imports what the trace uses, so the guard's snapshot includes it
    guard_holder.append(PatchGuard())
    path = request["candidate"]
    try:
        module = load_module(path, "kp_candidate")
    except StepError:
        raise
    except SyntaxError as e:
        raise StepError("compile_error",
                        f"candidate has a Python syntax error at line {e.lineno}: {e.msg}")
    except Exception as e:  # noqa: BLE001 - anything the candidate raises at import
        if request.get("device") == "cpu" and _cuda_arch_detection_failed(e):
            raise StepError("compile_error", CUDA_ON_CPU + " (it builds a CUDA extension)")
        raise StepError("runtime_error", f"candidate failed at import: {type(e).__name__}: {e}\n"
                        + bounded(traceback.format_exc(), 4000))
    if not hasattr(module, "ModelNew"):
        raise StepError("compile_error", "candidate does not define class ModelNew")
    return module, cache


def _cuda_arch_detection_failed(e):
    """torch's cpp_extension.load of .cu sources on a machine without a GPU fails while it reads
    the device's architecture, with an IndexError from _get_cuda_arch_flags."""
    if not isinstance(e, IndexError):
        return False
    frames = traceback.extract_tb(e.__traceback__)
    return any(frame.name == "_get_cuda_arch_flags" for frame in frames)


def step_build(request):
    torch = import_torch(request["device"])
    cache = build_cache(request)
    started = time.monotonic()
    try:
        import_candidate(request, torch, [], cache)
    except StepError as e:
        # The failed extension's record carries the compiler diagnostics for the debug prompt.
        return {"status": e.status, "message": e.message, "extensions": cache.extensions,
                "seconds": time.monotonic() - started}
    return {"status": "ok", "message": "", "extensions": cache.extensions,
            "seconds": time.monotonic() - started}


class LoadedCandidate:
    """A candidate imported and constructed in this process, with what the harness bound before
    the import: the functions it calls, the patch guard and the operator trace."""

    def __init__(self, torch, device, module, model, cache, guard, trace, init_inputs):
        self.torch, self.device, self.module, self.model = torch, device, module, model
        self.cache, self.guard, self.trace, self.init_inputs = cache, guard, trace, init_inputs
        # Everything the harness calls is bound before the candidate can rebind anything.
        self.save, self.clone = plain.save, torch.Tensor.clone
        self.to_host = torch.Tensor.cpu
        from . import tensors

        self.fingerprint = tensors.fingerprint
        self.calls = 0  # forward calls made through the harness
        self.kept_inputs = None  # the first check trial's inputs, for the refill call


def load_candidate(request):
    """Imports and constructs the candidate for check and timing. Returns (LoadedCandidate, None)
    or (None, result dict of the failure)."""
    device = request["device"]
    torch = import_torch(device)
    try:
        init_inputs = read_input(request, "init_inputs")
    except StepError as e:
        return None, {"status": e.status, "message": e.message, "findings": []}
    trace = optrace.OpTrace()
    guard = []
    try:
        module, cache = import_candidate(request, torch, guard)
    except StepError as e:
        return None, {"status": e.status, "message": e.message, "findings": []}
    try:
        model = construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
    except Exception as e:  # noqa: BLE001
        status, message = classify_runtime(e)
        return None, {"status": status, "findings": [], "extensions": cache.extensions,
                      "message": "ModelNew(*get_init_inputs()) failed: " + message}
    return LoadedCandidate(torch, device, module, model, cache, guard[0], trace, init_inputs), None


def patch_findings(loaded, when):
    """'fail' findings for what the candidate rebound or tampered with so far."""
    findings = []
    patched = loaded.guard.changed()
    if patched:
        findings.append({"rule": "patching", "severity": "fail", "line": 0,
                         "message": "candidate rebound " + ", ".join(patched) + " " + when})
    if loaded.trace.tampered:
        findings.append({"rule": "trace_tampering", "severity": "fail", "line": 0,
                         "message": "forward removed kernelpro's operator trace while it ran "
                                    f"({loaded.trace.tampered})"})
    return findings


def save_outputs(save, path, snapshot):
    """Writes a candidate's outputs with `save` (bound before the import); an output that is not
    plain data is an incorrect one."""
    try:
        save(path, snapshot, hashed=False)
    except plain.PlainError as e:
        raise StepError("incorrect", f"the output cannot be compared: {e}") from None
