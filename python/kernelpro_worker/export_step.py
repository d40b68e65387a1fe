"""The `export` step: writes a pip-installable package of one candidate (docs/export.md).

The candidate is imported (and its ModelNew constructed) with torch's load_inline and load
replaced by a recorder that builds nothing, so every extension it would build is captured with
its arguments: name, sources, functions, flags. Each becomes csrc/<name>/ (main.cpp, cuda.cu,
assembled as load_inline assembles them) and an entry of export.json, which the package's
setup.py compiles with torch's BuildExtension at install time. The package (templates in
export_template/) ships the candidate and the problem verbatim; its runtime shims load_inline to
return the prebuilt extensions, registers torch.ops.kernelpro.<op> and dispatches each call to
the kernel where guards.json allows it, to the reference otherwise.

Request: problem, candidate, device, init_seed, atol, rtol, out_dir, evaluation (what the
binary knows of the verdict: speedup, times, timing method, device name, source, shapes), and
optionally cutlass ({"include_dir", "version"}). Result: package, distribution, op_name,
extensions (names), guards (the derivation, one line each), files (relative to out_dir).
"""

import json
import os
import re
import shutil

from .common import StepError, bounded, load_module
from .loading import import_torch, load_problem

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_template")
# Copied into the package: template file -> its name there.
PACKAGE_FILES = {"package_init.py": "__init__.py", "_runtime.py": "_runtime.py",
                 "selftest.py": "selftest.py"}


def op_name(problem_path):
    """The operator's name: the problem file's stem (its folder's name for a problem.py),
    lowercase, non-identifier characters as '_', never starting with a digit."""
    stem = os.path.splitext(os.path.basename(problem_path))[0]
    if stem == "problem":
        stem = os.path.basename(os.path.dirname(os.path.abspath(problem_path))) or stem
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", stem).strip("_").lower() or "problem"
    return "op_" + name if name[0].isdigit() else name


class _Unbuilt:
    """What load_inline returns while the export captures: an extension nobody may call."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        def unbuilt(*args, **kwargs):
            raise RuntimeError(f"extension '{self._name}' is captured by kernelpro export, not "
                               f"built; {attr}() cannot run while exporting")
        return unbuilt


def capture_extensions(request, torch, problem):
    """(candidate module, [load_inline calls as dicts], notes): the candidate imported and its
    ModelNew constructed with load_inline recorded instead of built."""
    from torch.utils import cpp_extension

    from .buildcache import _load_inline_signature

    real_inline, real_load = cpp_extension.load_inline, cpp_extension.load
    while hasattr(real_inline, "__kernelpro_real__"):
        real_inline = real_inline.__kernelpro_real__
    signature = _load_inline_signature(real_inline)
    calls, notes = [], []

    def record(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        call = dict(bound.arguments)
        if not any(c["name"] == call["name"] for c in calls):
            calls.append(call)
        return _Unbuilt(call["name"])

    def refuse_load(*args, **kwargs):
        raise StepError("export_error", "the candidate builds with torch.utils.cpp_extension."
                        "load (source files); kernelpro export captures load_inline only")

    cpp_extension.load_inline, cpp_extension.load = record, refuse_load
    try:
        try:
            module = load_module(request["candidate"], "kp_candidate")
        except StepError:
            raise
        except Exception as e:  # noqa: BLE001 - the candidate's own failure at import
            raise StepError("export_error", f"the candidate failed at import: "
                            f"{type(e).__name__}: {bounded(str(e), 1500)}") from None
        if not hasattr(module, "ModelNew"):
            raise StepError("export_error", "the candidate does not define class ModelNew")
        try:
            torch.manual_seed(request["init_seed"])
            init = list(problem.get_init_inputs())
            torch.manual_seed(request["init_seed"])
            module.ModelNew(*init)
        except StepError:
            raise
        except Exception as e:  # noqa: BLE001 - e.g. __init__ calls an extension
            notes.append("ModelNew(*get_init_inputs()) could not be constructed while exporting "
                         f"({type(e).__name__}: {bounded(str(e), 300)}); load_inline calls in "
                         "its __init__, if any, were not captured")
    finally:
        cpp_extension.load_inline, cpp_extension.load = real_inline, real_load
    return module, calls, notes


def _as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def extension_files(call):
    """{file name: text} of one load_inline call, as load_inline writes them."""
    if _as_list(call.get("sycl_sources")):
        raise StepError("export_error", f"extension '{call['name']}' has sycl_sources, which "
                        "kernelpro export does not support")
    implicit = not call.get("no_implicit_headers", False)
    cpp = _as_list(call.get("cpp_sources"))
    cuda = _as_list(call.get("cuda_sources"))
    if implicit:
        cpp.insert(0, "#include <torch/extension.h>")
    functions = call.get("functions")
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f for f in functions}
        cpp.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for fn, doc in functions.items():
            bound = (f"torch::wrap_pybind_function({fn})"
                     if call.get("with_pytorch_error_handling", True) else fn)
            cpp.append(f'm.def("{fn}", {bound}, "{doc}");')
        cpp.append("}")
    files = {"main.cpp": "\n".join(cpp) + "\n"}
    if cuda:
        if implicit:
            cuda = ["#include <torch/types.h>", "#include <cuda.h>",
                    "#include <cuda_runtime.h>"] + cuda
        files["cuda.cu"] = "\n".join(cuda) + "\n"
    return files


def extension_entry(call, files, cutlass):
    """export.json's entry of one extension: what setup.py passes to BuildExtension."""
    from .buildcache import cutlass_flags, uses_cutlass

    call = dict(call)
    notes = []
    if uses_cutlass(call):
        note = cutlass_flags(call, cutlass)
        if note:
            notes.append(note)
    with_cuda = call.get("with_cuda")
    if with_cuda is None:
        with_cuda = bool(_as_list(call.get("cuda_sources")))
    return {"name": call["name"], "files": sorted(files), "with_cuda": bool(with_cuda),
            "cflags": _as_list(call.get("extra_cflags")),
            "cuda_cflags": _as_list(call.get("extra_cuda_cflags")),
            "ldflags": _as_list(call.get("extra_ldflags")),
            "include_dirs": _as_list(call.get("extra_include_paths")), "notes": notes}


def _jsonable(value):
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def benchmark_facts(torch, problem, seed):
    """(inputs spec, benchmark signature, init inputs or None, outputs count): get_inputs() and
    get_init_inputs() under the init seed, and the reference run once (on the meta device where
    it can, so a large problem costs nothing) for its number of outputs."""
    from .common import as_output_list
    from .loading import construct

    torch.manual_seed(seed)
    init = list(problem.get_init_inputs())
    torch.manual_seed(seed)
    inputs = list(problem.get_inputs())
    spec, sig = [], []
    for value in inputs:
        if isinstance(value, torch.Tensor):
            spec.append({"tensor": True})
            dtype = str(value.dtype).replace("torch.", "")
            sig.append({"shape": list(value.shape), "dtype": dtype})
        else:
            if not _jsonable(value):
                raise StepError("export_error", f"get_inputs() returns a {type(value).__name__}, "
                                "which is neither a tensor nor plain data")
            spec.append({"tensor": False, "value": value})
            sig.append(None)
    model = construct(torch, problem.Model, init, seed, "cpu")
    outputs = None
    try:
        meta = [v.to("meta") if isinstance(v, torch.Tensor) else v for v in inputs]
        with torch.no_grad():
            outputs = as_output_list(model.to("meta")(*meta))
    except Exception:  # noqa: BLE001 - an operator without a meta kernel: run it for real
        model = construct(torch, problem.Model, init, seed, "cpu")
        with torch.no_grad():
            outputs = as_output_list(model(*inputs))
    return spec, sig, (init if _jsonable(init) else None), len(outputs)


def derive_guards(device, benchmark, shapes):
    """guards.json and its derivation, one line each (docs/export.md, "Guards")."""
    guards = {"devices": [device], "contiguous": True, "exact": [benchmark], "families": []}
    why = [f"the benchmark's inputs (get_inputs()) on {device}: " + describe(benchmark)]
    checked = (shapes or {}).get("checked") or []
    if not shapes or shapes.get("mode") == "off" or not checked:
        why.append("no other shapes: the eval result carries no shape checks")
        return guards, why
    correct = [c["inputs"] for c in checked if c.get("status") == "correct"]
    for sig in correct:
        if sig not in guards["exact"]:
            guards["exact"].append(sig)
            why.append("checked correct: " + describe(sig))
    wrong = [c for c in checked if c.get("status") != "correct"]
    for c in wrong:
        why.append(f"not served ({c.get('status')}): " + describe(c.get("inputs") or []))
    if shapes.get("all_correct") and len(checked) >= 2 and not wrong:
        for sig in [benchmark] + correct:
            family = {"ranks": [len(s["shape"]) if s else None for s in sig],
                      "dtypes": [s["dtype"] if s else None for s in sig]}
            if family not in guards["families"]:
                guards["families"].append(family)
                why.append("shape family (all {} checked shapes correct): any shapes of ranks {} "
                           "and dtypes {}".format(len(checked), family["ranks"],
                                                  family["dtypes"]))
    return guards, why


def describe(sig):
    parts = [("x".join(str(d) for d in s["shape"]) or "scalar") + " " + s["dtype"] if s
             else "non-tensor" for s in sig]
    return ", ".join(parts) if parts else "no inputs"


def step_export(request):
    torch = import_torch("cpu")  # exporting builds nothing and runs nothing on the device
    out_dir = request["out_dir"]
    problem = load_problem(request["problem"])
    if getattr(problem, "BaselineModel", None) is not None or not hasattr(problem, "Model"):
        raise StepError("export_error", "the problem is a Triton or CUDA program; kernelpro "
                        "export takes KernelBench-style problems (class Model) only")
    name = request.get("name") or op_name(request["problem"])
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise StepError("export_error", f"the operator name {name!r} is not a lowercase Python "
                        "identifier")
    package = "kernelpro_" + name
    _, calls, notes = capture_extensions(request, torch, problem)
    spec, sig, init, n_out = benchmark_facts(torch, problem, request["init_seed"])
    device = request["device"]
    evaluation = request.get("evaluation") or {}
    guards, why = derive_guards(device, sig, evaluation.get("shapes"))

    pkg_dir = os.path.join(out_dir, package)
    os.makedirs(os.path.join(pkg_dir, "_ext"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "tests"), exist_ok=True)
    entries = []
    for call in calls:
        files = extension_files(call)
        entries.append(extension_entry(call, files, request.get("cutlass")))
        where = os.path.join(out_dir, "csrc", call["name"])
        os.makedirs(where, exist_ok=True)
        for file_name, text in files.items():
            _write(os.path.join(where, file_name), text)
    meta = {"op_name": name, "package": package,
            "distribution": "kernelpro-" + name.replace("_", "-"), "version": "0.1.0",
            "problem_file": os.path.basename(request["problem"]),
            "candidate_file": os.path.basename(request["candidate"]),
            "device": device, "init_seed": request["init_seed"], "atol": request["atol"],
            "rtol": request["rtol"], "inputs": spec, "init_inputs": init, "outputs": n_out,
            "extensions": entries, "evaluation": evaluation, "notes": notes,
            "python": request.get("python") or "python3"}
    _write(os.path.join(pkg_dir, "export.json"), json.dumps(meta, indent=1) + "\n")
    _write(os.path.join(pkg_dir, "guards.json"),
           json.dumps(dict(guards, derivation=why), indent=1) + "\n")
    shutil.copyfile(request["candidate"], os.path.join(pkg_dir, "candidate.py"))
    shutil.copyfile(request["problem"], os.path.join(pkg_dir, "reference.py"))
    _write(os.path.join(pkg_dir, "_ext", "__init__.py"),
           '"""The extensions setup.py builds from csrc/."""\n')
    for source, target in PACKAGE_FILES.items():
        shutil.copyfile(os.path.join(TEMPLATE_DIR, source), os.path.join(pkg_dir, target))
    shutil.copyfile(os.path.join(TEMPLATE_DIR, "setup.py"), os.path.join(out_dir, "setup.py"))
    shutil.copyfile(os.path.join(TEMPLATE_DIR, "test_op.py"),
                    os.path.join(out_dir, "tests", "test_op.py"))
    from .export_readme import readme

    _write(os.path.join(out_dir, "README.md"), readme(meta, why))
    files = sorted(os.path.relpath(os.path.join(d, f), out_dir)
                   for d, _, fs in os.walk(out_dir) for f in fs)
    return {"status": "ok", "package": package, "distribution": meta["distribution"],
            "op_name": name, "extensions": [e["name"] for e in entries], "guards": why,
            "notes": notes, "outputs": n_out, "files": files}


def _write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
