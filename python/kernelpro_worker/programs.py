"""Triton and CUDA programs as problems (docs/programs.md).

A kernel engineer's starting point is often a program, not a KernelBench problem: a Triton kernel
with its launcher, or a CUDA file. `adapt` turns both into the one problem form the harness knows
(a module with Model, get_inputs, get_init_inputs), so every step takes them unchanged:

  - a Python program: a module with ENTRY = "launcher" (a module-level function), get_inputs()
    and get_init_inputs(), and no class Model;
  - a CUDA program: a .cu file whose `/* kernelpro ... */` block holds that Python (ENTRY,
    get_inputs, get_init_inputs), and whose ENTRY is a host function on torch tensors; it is
    built with load_inline under a name that hashes its source.

The adapted module's Model is Model(*init_inputs) whose forward(*inputs) returns
ENTRY(*inputs, *init_inputs). With REFERENCE = "file.py" (a KernelBench problem beside the
program), Model is that file's PyTorch Model (the outputs the candidates must match) and
BaselineModel the program (the time to beat); without it both are the program. KERNELPRO_PROGRAM
says what the module was made from.
"""

import hashlib
import os
import re

from .common import StepError

BLOCK = re.compile(r"/\*\s*kernelpro\b(.*?)\*/", re.S)
PROGRAM_KINDS = ("triton", "cuda", "python")


def is_cuda_program(path):
    return path.endswith(".cu")


def reference_file(path):
    """The REFERENCE a program names (absolute), read from its text without running it; None when
    it names none. The reference cache's key covers this file too."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    match = re.search(r"^\s*REFERENCE\s*=\s*[\"']([^\"']+)[\"']", text, re.M)
    if not match:
        return None
    name = match.group(1)
    if os.path.isabs(name):
        return name
    return os.path.join(os.path.dirname(os.path.abspath(path)), name)


def baseline_class(problem):
    """The model timed as the baseline: a program's own (BaselineModel), else Model."""
    return getattr(problem, "BaselineModel", None) or problem.Model


def _kind_of_python(module):
    source = getattr(module, "__file__", None)
    text = ""
    if source and os.path.isfile(source):
        with open(source, errors="replace") as f:
            text = f.read()
    if re.search(r"^\s*(import triton|from triton)", text, re.M):
        return "triton"
    if "load_inline" in text or "__global__" in text:
        return "cuda"
    return "python"


def _program_model(entry, name):
    """nn.Module around ENTRY: Model(*init) whose forward(*inputs) returns ENTRY(*inputs, *init).
    Tensors among the init inputs are buffers, so that `.to(device)` moves them."""
    import torch

    class ProgramModel(torch.nn.Module):
        def __init__(self, *init_inputs):
            super().__init__()
            self._kp_init = []
            for i, value in enumerate(init_inputs):
                if isinstance(value, torch.Tensor):
                    self.register_buffer(f"_kp_init_{i}", value)
                    self._kp_init.append(("buffer", f"_kp_init_{i}"))
                else:
                    self._kp_init.append(("value", value))

        def forward(self, *inputs):
            init = [getattr(self, v) if k == "buffer" else v for k, v in self._kp_init]
            return entry(*inputs, *init)

    ProgramModel.__name__ = ProgramModel.__qualname__ = f"Program_{name}"
    return ProgramModel


def _load_reference(path, program_path, load_problem):
    full = path if os.path.isabs(path) else os.path.join(
        os.path.dirname(os.path.abspath(program_path)), path)
    if not os.path.isfile(full):
        raise StepError("problem_error", f"program {program_path}: REFERENCE {path!r} does not "
                        f"exist (looked for {full})")
    reference = load_problem(full)
    if getattr(reference, "KERNELPRO_PROGRAM", None) is not None:
        raise StepError("problem_error", f"program {program_path}: REFERENCE {path!r} is itself a "
                        "program; it must be a PyTorch problem (class Model)")
    return reference, os.path.abspath(full)


def _finish(module, path, kind, entry_name, entry, reference_path, load_problem):
    for name in ("get_inputs", "get_init_inputs"):
        if not callable(getattr(module, name, None)):
            raise StepError("problem_error", f"program {path} does not define {name}() "
                            "(docs/programs.md: ENTRY, get_inputs(), get_init_inputs())")
    baseline = _program_model(entry, entry_name)
    module.BaselineModel = baseline
    reference = None
    if reference_path:
        if not isinstance(reference_path, str):
            raise StepError("problem_error", f"program {path}: REFERENCE must be a file name, "
                            f"not {type(reference_path).__name__}")
        ref_module, reference = _load_reference(reference_path, path, load_problem)
        module.Model = ref_module.Model
    else:
        module.Model = baseline
    module.KERNELPRO_PROGRAM = {"kind": kind, "path": os.path.abspath(path), "entry": entry_name,
                                "reference": reference}
    return module


def adapt_python(module, path, load_problem):
    """A Python module without class Model that names its launcher in ENTRY (load_problem calls
    this only then; a module with neither is load_problem's error). `load_problem`
    (loading.load_problem) loads the REFERENCE the program names."""
    entry_name = module.ENTRY
    if not isinstance(entry_name, str):
        raise StepError("problem_error", f"program {path}: ENTRY must be the launcher's name as a "
                        f"string, not {type(entry_name).__name__}")
    entry = getattr(module, entry_name, None)
    if not callable(entry):
        raise StepError("problem_error", f"program {path}: ENTRY = {entry_name!r} names no "
                        "function of the module")
    return _finish(module, path, _kind_of_python(module), entry_name, entry,
                   getattr(module, "REFERENCE", None), load_problem)


def entry_declaration(source, entry_name):
    """The C++ declaration of ENTRY's definition in `source` ("torch::Tensor f(torch::Tensor x);"),
    or None when no definition of that name returning torch types is found."""
    ret = (r"(?:torch::Tensor|at::Tensor|std::vector<\s*(?:torch|at)::Tensor\s*>"
           r"|std::tuple<[^;{]*?>)")
    pattern = re.compile(r"(?:^|\n)[ \t]*(" + ret + r"\s+" + re.escape(entry_name) +
                         r"\s*\(([^()]*)\))\s*\{")
    match = pattern.search(source)
    return match.group(1).strip() + ";" if match else None


def load_cuda(path, load_problem):
    """A .cu program: its kernelpro block run as Python, its ENTRY built and bound.
    `load_problem` (loading.load_problem) loads the REFERENCE the program names."""
    import types

    import torch

    if not os.path.isfile(path):
        raise StepError("input_error", f"file not found: {path}")
    with open(path, errors="replace") as f:
        source = f.read()
    block = BLOCK.search(source)
    if block is None:
        raise StepError("problem_error", f"CUDA program {path} has no /* kernelpro ... */ block: "
                        "it must define ENTRY, get_inputs() and get_init_inputs() there "
                        "(docs/programs.md)")
    module = types.ModuleType("kp_cuda_program_" + hashlib.sha256(path.encode()).hexdigest()[:8])
    module.__file__ = os.path.abspath(path)
    module.torch = torch
    namespace = module.__dict__
    line = source[:block.start(1)].count("\n") + 1
    try:
        code = compile(_dedent(block.group(1)), f"{path} (kernelpro block, from line {line})",
                       "exec")
        exec(code, namespace)  # noqa: S102 - the user's own problem definition, as any problem.py
    except SyntaxError as e:
        raise StepError("problem_error", f"CUDA program {path}: its kernelpro block has a syntax "
                        f"error at line {(e.lineno or 1) + line - 1}: {e.msg}") from None
    except Exception as e:  # noqa: BLE001 - the block is the problem's own code
        raise StepError("problem_error", f"CUDA program {path}: its kernelpro block failed: "
                        f"{type(e).__name__}: {e}") from None
    entry_name = namespace.get("ENTRY")
    if not isinstance(entry_name, str) or not entry_name:
        raise StepError("problem_error", f"CUDA program {path}: its kernelpro block defines no "
                        "ENTRY = \"name\" naming the host function to call")
    declaration = entry_declaration(source, entry_name)
    if declaration is None:
        raise StepError("problem_error", f"CUDA program {path}: no definition of ENTRY "
                        f"{entry_name!r} returning torch::Tensor (or std::vector<torch::Tensor>) "
                        "found: write it as `torch::Tensor " + entry_name
                        + "(torch::Tensor x, ...) {`")
    holder = {}

    def entry(*args):
        if "ext" not in holder:
            holder["ext"] = _build_cuda(path, source, declaration, entry_name,
                                        namespace.get("CUDA_CFLAGS", []))
        return getattr(holder["ext"], entry_name)(*args)

    return _finish(module, path, "cuda", entry_name, entry, namespace.get("REFERENCE"),
                   load_problem)


def _build_cuda(path, source, declaration, entry_name, cflags):
    from torch.utils.cpp_extension import load_inline

    digest = hashlib.sha256((source + repr(cflags)).encode()).hexdigest()[:16]
    try:
        return load_inline(name=f"kp_program_{digest}", cpp_sources=declaration,
                           cuda_sources=source, functions=[entry_name],
                           extra_cuda_cflags=list(cflags), verbose=False)
    except Exception as e:  # noqa: BLE001 - the program's build failed: its author's to fix
        message = str(e)
        lines = [l for l in message.splitlines() if "error" in l.lower()][:12]
        raise StepError("problem_error", f"CUDA program {path} failed to build: "
                        + ("\n".join(lines) if lines else message[-2000:])) from None


def _dedent(text):
    import textwrap

    # Leading blank lines are kept, so that the block's line numbers map back to the file's.
    return textwrap.dedent(text)
