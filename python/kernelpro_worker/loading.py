"""What several worker steps share: torch for the requested device, the problem, the trials'
inputs as the reference step recorded them, and the model built from them.

Nothing here imports a candidate (candidate.py does): the referee's steps (reference, compare)
use this module alone. Every file read here crosses processes as plain data (plain.py) and is
checked against the content hashes the reference step recorded before it is used; a file that
fails is reported with status `reference_changed` and the binary recomputes the reference.
"""

import os

from . import plain, programs
from .common import StepError, bounded, load_module, to_device

EXT = ".kpt"  # plain data files


def import_torch(device):
    """torch, with CUDA started and TORCH_CUDA_ARCH_LIST set for this GPU when `device` is
    cuda; a device_error when torch has no GPU to give."""
    import torch

    if device == "cuda":
        if not torch.cuda.is_available():
            raise StepError("device_error", "device 'cuda' requested but "
                            "torch.cuda.is_available() is False (no GPU or no CUDA build of "
                            "torch); use --device cpu")
        torch.cuda.init()
        if "TORCH_CUDA_ARCH_LIST" not in os.environ:
            major, minor = torch.cuda.get_device_capability()
            # Hopper and newer: build for the architecture-specific target (sm_90a, sm_100a) so
            # candidates may use warpgroup MMA, TMA multicast and the like; the binary only has
            # to run on this device.
            suffix = "a" if major >= 9 else ""
            os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}{suffix}"
    return torch


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def load_problem(path):
    """Loads a KernelBench-style problem and checks that it has what the harness needs. A Triton
    or CUDA program (docs/programs.md) is adapted to that form (programs.py), which loads the
    REFERENCE it names through this function."""
    if programs.is_cuda_program(path):
        return programs.load_cuda(path, load_problem)
    try:
        module = load_module(path, "kp_problem")
    except StepError:
        raise
    except SyntaxError as e:
        raise StepError("problem_error",
                        f"problem {path} has a syntax error at line {e.lineno}: {e.msg}")
    except Exception as e:  # noqa: BLE001 - any import failure is the problem's fault
        raise StepError("problem_error",
                        f"problem {path} failed to import: {type(e).__name__}: {e}")
    if not hasattr(module, "Model") and hasattr(module, "ENTRY"):
        return programs.adapt_python(module, path, load_problem)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        hint = (" (a Triton or CUDA program names its launcher in ENTRY instead: docs/programs.md)"
                if "Model" in missing else "")
        raise StepError("problem_error",
                        f"problem {path} does not define {', '.join(missing)}{hint}")
    return module


def construct(torch, cls, init_inputs, seed, device):
    """cls(*init_inputs) under `seed`, moved to `device` when it is a module."""
    torch.manual_seed(seed)
    model = cls(*init_inputs)
    return model.to(device) if hasattr(model, "to") else model


def classify_runtime(e):
    """(status, message) of an exception a model raised while it ran."""
    text = f"{type(e).__name__}: {e}"
    low = text.lower()
    if "out of memory" in low or "can't allocate memory" in low or "cannot allocate memory" in low:
        return "runtime_error", "out of memory: " + bounded(text, 1500)
    if ("illegal memory access" in low or "misaligned address" in low
            or "illegal instruction" in low):
        return "runtime_error", "CUDA fault: " + bounded(text, 1500)
    return "runtime_error", bounded(text, 3000)


def out_of_memory(error):
    """Whether `error` is the device or the host running out of memory: never a changed
    reference (recomputing one would only run out again)."""
    return isinstance(error, MemoryError) or "out of memory" in str(error).lower()


def reference_changed(what, error):
    """The status the binary answers by recomputing the reference: `what` ("the reference's
    expected/check_0.kpt") is not what the reference step wrote."""
    detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return StepError("reference_changed", f"{what} changed after the reference step wrote it "
                     f"({detail})")


def read_input(request, name):
    """Trial inputs (or the init inputs) from the inputs tree, checked against the manifest the
    binary passed from the reference step's result; or, for inputs too large to be stored,
    regenerated from the recipe it passed (`inputs_recipe`) and checked against its
    fingerprint."""
    rel = name + EXT
    sha = (request.get("inputs_manifest") or {}).get(rel)
    recipe = request.get("inputs_recipe") or {}
    if sha is None and name in (recipe.get("trials") or {}):
        return _regenerate_input(request, name, recipe)
    if sha is None:
        raise reference_changed(f"the problem's input file {rel}", "not in the inputs manifest")
    try:
        return plain.load(os.path.join(request["inputs_dir"], rel), sha256=sha)
    except (OSError, plain.PlainError) as e:
        raise reference_changed(f"the problem's input file {rel}", e) from None


_PROBLEMS = {}  # problem path -> module, for regenerating inputs in this process


def made_again(what, make, fingerprint):
    """Inputs made again in this process by `make()` (on the device), returned only if they have
    the `fingerprint` (tensors.fingerprint) the reference step recorded; else reference_changed,
    which the binary answers by recomputing the reference. Running out of memory is said as such:
    recomputing the reference would only run out again."""
    from . import tensors

    try:
        inputs = make()
        digest = tensors.fingerprint(inputs)
    except Exception as e:  # noqa: BLE001 - whatever failed, the binary recomputes the reference
        if out_of_memory(e):
            raise StepError("runtime_error", f"{what} could not be made again: "
                            f"{type(e).__name__}: {e}") from None
        raise reference_changed(what, f"making them again failed: "
                                f"{type(e).__name__}: {bounded(str(e), 300)}") from None
    if digest != fingerprint:
        raise reference_changed(what, "made again, they differ from what the reference step "
                                "recorded")
    return inputs


def _regenerate_input(request, name, recipe):
    """A trial's inputs as the reference step made them: get_inputs() under the trial's seed, on
    the device, with the extra trials' perturbation, checked against the recorded fingerprint."""
    from . import tensors

    trial = recipe["trials"][name]

    def make():
        path = recipe["problem"]
        if path not in _PROBLEMS:
            _PROBLEMS[path] = load_problem(path)
        inputs = to_device(tensors.generate_inputs(_PROBLEMS[path], int(trial["seed"]),
                                                   request["device"]), request["device"])
        variant = trial.get("variant")
        if variant is not None:
            inputs = tensors.signed_mixed_scale(inputs, int(trial["seed"]),
                                                signs=bool(variant["signs"]),
                                                scales=bool(variant["scales"]))
        return inputs

    return made_again(f"the problem's inputs of trial {name}", make, trial.get("fingerprint"))
