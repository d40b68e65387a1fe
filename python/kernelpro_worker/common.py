"""Helpers every worker module may use: the step error, hashes, importing a Python file,
JSON and output normalisation. It imports no other worker module (loading.py loads problems)."""

import hashlib
import importlib.util
import json
import math
import os
import sys
import uuid


# The verdict's message for a CUDA candidate evaluated with --device cpu: the candidate is not
# wrong, the device is.
CUDA_ON_CPU = "this candidate builds CUDA; use --device cuda"


class StepError(Exception):
    """A failure the step reports as data: `status` is the verdict class it implies."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def bounded(text, limit=8192):
    """Keeps the head and tail of long text, marking what was dropped."""
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[... {len(text) - limit} characters dropped ...]\n" + text[-half:]


def sha256_text(*parts):
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8") if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()


def sha256_file(path):
    """Read in chunks: reference outputs can be gigabytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_module(path, prefix):
    """Executes a Python file as a fresh module with a unique name and returns it."""
    if not os.path.isfile(path):
        raise StepError("input_error", f"file not found: {path}")
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # The file's own directory is importable, as it would be when run as a script.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def as_output_list(out, strict=False):
    """Normalises a forward() result to a list of tensors (tuples and lists are flattened once).

    `strict` (a candidate's outputs): every element must be a plain dense torch.Tensor or a
    Python number; a tensor subclass or any other object is an incorrect output, named by its
    type, since what the harness would read from it is whatever the subclass chooses to show."""
    import torch

    is_sequence = type(out) in (tuple, list) if strict else isinstance(out, (tuple, list))
    items = list(out) if is_sequence else [out]
    result = []
    for i, item in enumerate(items):
        kind = type(item)
        if kind is torch.Tensor or (not strict and isinstance(item, torch.Tensor)):
            if strict and item.layout != torch.strided:
                raise StepError("incorrect", f"output {i} is a {item.layout} tensor; forward must "
                                "return dense (strided) tensors")
            result.append(item)
        elif kind in (int, float, bool):
            result.append(torch.tensor(item))
        elif strict and isinstance(item, torch.Tensor):
            raise StepError("incorrect", f"output {i} is a {kind.__qualname__}, a subclass of "
                            "torch.Tensor; forward must return plain torch.Tensor objects")
        else:
            raise StepError("incorrect" if strict else "runtime_error",
                            f"output {i} is a {kind.__qualname__}, not a tensor")
    return result


def to_device(values, device):
    import torch

    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def json_safe(obj):
    """`obj` with every NaN or infinity replaced by null, so the result is strict JSON (the
    binary's parser rejects NaN). In an object, the replaced field gets a companion
    "<field>_text" ("nan", "inf", "-inf") so a reader still sees what the value was."""
    def text(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if isinstance(value, float) and not math.isfinite(value):
                out[key] = None
                out[f"{key}_text"] = text(value)
            else:
                out[key] = json_safe(value)
        return out
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def write_json(path, obj):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(json_safe(obj), f, indent=1, sort_keys=True, allow_nan=False)
    os.replace(tmp, path)


def read_json(path):
    with open(path) as f:
        return json.load(f)
