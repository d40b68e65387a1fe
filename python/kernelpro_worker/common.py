"""Helpers shared by the worker steps: loading problem and candidate files, tensor I/O."""

import hashlib
import importlib.util
import json
import os
import sys
import uuid


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
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


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


def load_problem(path):
    """Loads a KernelBench-style problem and checks that it has what the harness needs."""
    try:
        module = load_module(path, "kp_problem")
    except StepError:
        raise
    except SyntaxError as e:
        raise StepError("problem_error", f"problem {path} has a syntax error at line {e.lineno}: {e.msg}")
    except Exception as e:  # noqa: BLE001 - any import failure is the problem's fault
        raise StepError("problem_error", f"problem {path} failed to import: {type(e).__name__}: {e}")
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise StepError("problem_error", f"problem {path} does not define {', '.join(missing)}")
    return module


def as_output_list(out):
    """Normalises a forward() result to a list of tensors (tuples and lists are flattened once)."""
    import torch

    items = list(out) if isinstance(out, (tuple, list)) else [out]
    result = []
    for item in items:
        if isinstance(item, torch.Tensor):
            result.append(item)
        elif isinstance(item, (int, float, bool)):
            result.append(torch.tensor(item))
        else:
            raise StepError("runtime_error", f"forward returned a {type(item).__name__}, not a tensor")
    return result


def to_device(values, device):
    import torch

    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def write_json(path, obj):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def read_json(path):
    with open(path) as f:
        return json.load(f)
