"""Static checks of a problem and a candidate, on their syntax trees (no torch import, no exec).

Catches, before anything runs: a candidate that does not parse or defines no ModelNew; a
candidate whose forward calls the torch operators the reference uses for its computation
(policy: forbid, warn or allow); a candidate that rebinds torch, time or harness functions,
introspects the harness or rebinds the reference Model; side streams that are never joined back
to the current stream; and reduced-precision math in an fp32 problem (reported, the fp64 check
decides). step_scan, the worker's `scan` step, runs both.
"""

import ast
import os
import re

# Tensor methods and torch functions that allocate, view or describe tensors: never "the
# reference's computation", whatever the reference uses.
NEUTRAL_OPS = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "tensor", "as_tensor", "from_numpy", "arange", "contiguous", "view", "view_as",
    "reshape", "reshape_as", "size", "dim", "numel", "stride", "shape", "to", "cuda", "cpu",
    "float", "double", "half", "bfloat16", "int", "long", "bool", "type", "data_ptr",
    "is_contiguous", "unsqueeze", "squeeze", "flatten", "unflatten", "expand", "expand_as",
    "permute", "transpose", "t", "narrow", "select", "split", "chunk", "unbind", "detach",
    "requires_grad_", "element_size", "is_cuda", "get_device", "item", "tolist", "no_grad",
    "inference_mode", "device", "dtype", "manual_seed", "clone", "copy_", "fill_", "zero_",
    "new_empty", "new_zeros", "new_ones", "new_full", "storage_offset", "is_floating_point",
}

# Modules whose attributes a candidate must never rebind.
PROTECTED_ROOTS = {"torch", "time", "builtins", "sys", "gc", "inspect", "kernelpro_worker",
                   "numpy", "np", "F", "nn", "math"}
INTROSPECTION = {("gc", "get_objects"), ("gc", "get_referrers"), ("sys", "_getframe"),
                 ("inspect", "stack"), ("inspect", "currentframe"), ("sys", "settrace"),
                 ("sys", "setprofile")}
STREAM_CREATE = re.compile(r"cudaStreamCreate\w*|getStreamFromPool|cudaStreamPerThread|"
                           r"torch\.cuda\.Stream\s*\(|torch\.cuda\.stream\s*\(")
STREAM_JOIN = re.compile(r"cudaStreamWaitEvent|wait_stream|wait_event|cudaStreamSynchronize|"
                         r"cudaDeviceSynchronize|\.synchronize\s*\(")
# PyTorch's dispatch-mode machinery, in Python or in an extension's C++: kernelpro's operator trace
# (optrace.py) is a TorchDispatchMode, and code that pops, disables, excludes or looks for it can
# run the reference's operators unseen or behave differently while traced.
TRACE_TAMPERING = re.compile(
    r"_DisableTorchDispatch|_DisablePythonDispatcher|_EnablePythonDispatcher|_python_dispatch|"
    r"TorchDispatchMode|_pop_mode|_push_mode|_pop\w*dispatch|_push\w*dispatch|"
    r"_set\w*dispatch_mode|_get\w*dispatch_mode|_unset\w*(?:mode|dispatch)|_dispatch_tls_local|"
    r"_len_torch_dispatch_stack|"
    r"_get_dispatch_stack_at|_disabled_torch_dispatch_impl|__torch_dispatch__|"
    r"ExcludeDispatchKeyGuard|IncludeDispatchKeyGuard|DispatchKey::Python|PythonTLSSnapshot|"
    r"TorchDispatchModeTLS|tls_set_dispatch_key|_ExcludeDispatchKeyGuard")
LOW_PRECISION = re.compile(r"\b(__half|half2|__nv_bfloat16|nv_bfloat16|wmma::|mma\.sync|"
                           r"wgmma|tf32|__float2half|allow_tf32|set_float32_matmul_precision)\b")

COMPUTE_MODULES = {
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "MultiheadAttention",
    "LSTM", "GRU", "RNN", "Embedding", "Softmax", "LogSoftmax", "GELU", "ReLU", "SiLU",
    "Sigmoid", "Tanh", "Dropout", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d",
    "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool2d", "TransformerEncoderLayer", "Transformer",
}


def _dotted(node):
    """'torch.nn.functional.gelu' for an attribute chain rooted at a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Aliases:
    """Import aliases of a module: F -> torch.nn.functional, sigmoid -> torch.sigmoid."""

    def __init__(self, tree):
        self.names = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    self.names[a.asname or top] = a.name if a.asname else top
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.names[a.asname or a.name] = f"{node.module}.{a.name}"

    def resolve(self, dotted):
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        full = self.names.get(head, head)
        return f"{full}.{rest}" if rest else full


def _class(tree, name):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _module_attrs(cls, aliases):
    """self.<attr> = nn.<Module>(...) assignments in a class: attr -> module class name."""
    found = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            ctor = aliases.resolve(_dotted(node.value.func)) or ""
            if not ctor.startswith("torch.nn."):
                continue
            base = ctor.rsplit(".", 1)[-1]
            if (base == "ModuleList" and node.value.args
                    and isinstance(node.value.args[0], (ast.ListComp, ast.List))):
                inner = node.value.args[0]
                elt = (inner.elt if isinstance(inner, ast.ListComp)
                       else (inner.elts[0] if inner.elts else None))
                if isinstance(elt, ast.Call):
                    base = (aliases.resolve(_dotted(elt.func)) or "").rsplit(".", 1)[-1]
            for target in node.targets:
                if isinstance(target, ast.Attribute) and _dotted(target.value) == "self":
                    found[target.attr] = base
    return found


def _extension_names(tree, aliases):
    """Names bound to compiled extensions (x = load_inline(...)): calls on them are the
    candidate's own code, whatever the functions are called."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = aliases.resolve(_dotted(node.value.func)) or ""
            if func.rsplit(".", 1)[-1] in ("load_inline", "load") or "cpp_extension" in func:
                for target in node.targets:
                    dotted = _dotted(target)
                    if dotted:
                        names.add(dotted)
    return names


def _ops_used(cls, aliases, own_code=frozenset()):
    """Operators a class's methods call: {'op name': first line}. Names are short ('sigmoid').
    Calls on `own_code` objects (compiled extensions) are not counted."""
    ops = {}
    modules = _module_attrs(cls, aliases)

    def add(name, line):
        if name and name not in NEUTRAL_OPS:
            ops.setdefault(name, line)

    # Construction is not computation: parameters may be drawn with torch.randn in __init__.
    methods = [m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name != "__init__"]
    nodes = [n for m in methods for n in ast.walk(m)]
    for node in nodes:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            add("matmul", node.lineno)
        if not isinstance(node, ast.Call):
            continue
        dotted = aliases.resolve(_dotted(node.func))
        if dotted and (dotted.startswith("torch.") or dotted.startswith("math.")):
            if dotted.startswith("torch.nn.") and not dotted.startswith("torch.nn.functional."):
                continue  # constructing modules, parameters: not computation
            add(dotted.rsplit(".", 1)[-1], node.lineno)
        elif isinstance(node.func, ast.Attribute):
            owner = _dotted(node.func.value)
            if owner == "self" and node.func.attr in modules:
                add(f"nn.{modules[node.func.attr]}", node.lineno)
            elif owner != "self" and owner not in own_code and not node.func.attr.startswith("__"):
                add(node.func.attr, node.lineno)
    # Calls through iteration over a ModuleList (for layer in self.layers: layer(x)).
    for node in nodes:
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Attribute) and \
                _dotted(node.iter.value) == "self" and node.iter.attr in modules and \
                isinstance(node.target, ast.Name):
            var = node.target.id
            for inner in ast.walk(node):
                if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)
                        and inner.func.id == var):
                    add(f"nn.{modules[node.iter.attr]}", inner.lineno)
    return ops


def _strings(tree):
    return "\n".join(n.value for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _program_reference_ops(path):
    """A program (docs/programs.md): the torch operators of its REFERENCE's Model, which the
    candidates must not call; none when it has no REFERENCE (its kernels are its own)."""
    from .programs import reference_file

    reference = reference_file(path)
    if not reference or not os.path.isfile(reference):
        return {"ok": True, "reference_ops": []}
    with open(reference, errors="replace") as f:
        scanned = scan_problem(f.read(), reference)
    return scanned if not scanned["ok"] else {"ok": True, "reference_ops": scanned["reference_ops"]}


def scan_problem(source, path="problem.py"):
    if path.endswith(".cu"):
        return _program_reference_ops(path)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        return {"ok": False, "error": f"problem has a syntax error at line {e.lineno}: {e.msg}"}
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign)
              for t in n.targets if isinstance(t, ast.Name)}
    if "Model" not in names and "ENTRY" in names:
        return _program_reference_ops(path)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    if missing:
        return {"ok": False, "error": f"problem does not define {', '.join(missing)}"}
    model = _class(tree, "Model")
    ops = _ops_used(model, _Aliases(tree)) if model else {}
    return {"ok": True, "reference_ops": sorted(ops)}


def scan_candidate(source, reference_ops, policy="forbid", allowed_ops=(), fp32_problem=True,
                   path="candidate.py"):
    """Returns {'status': 'ok'|'compile_error', 'message', 'findings': [...]}.

    A finding is {'rule', 'severity': 'fail'|'warn', 'message', 'line'}. 'fail' findings make
    the candidate incorrect; 'warn' findings are reported only.
    """
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        return {"status": "compile_error", "findings": [],
                "message": f"candidate has a Python syntax error at line {e.lineno}: {e.msg}"}
    cls = _class(tree, "ModelNew")
    if cls is None:
        return {"status": "compile_error", "findings": [],
                "message": "candidate does not define class ModelNew"}
    aliases = _Aliases(tree)
    findings = []

    def finding(rule, severity, message, line=0):
        findings.append({"rule": rule, "severity": severity, "message": message, "line": line})

    # 1. The reference's own operators in the candidate's forward path.
    if policy != "allow":
        used = _ops_used(cls, aliases, _extension_names(tree, aliases))
        allowed = set(allowed_ops)
        for op, line in sorted(used.items(), key=lambda kv: kv[1]):
            if op in reference_ops and op not in allowed:
                finding("reference_op", "fail" if policy == "forbid" else "warn",
                        f"calls {op} (line {line}), which the reference uses for its computation; "
                        f"write the computation yourself (policy '{policy}'; allow it with "
                        f"--allow-torch-op {op})", line)

    # 2. Rebinding harness-relevant functions, introspection, reaching for the reference.
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            dotted = aliases.resolve(_dotted(target)) if isinstance(target, ast.Attribute) else None
            if dotted and dotted.split(".")[0] in PROTECTED_ROOTS | {"torch", "time"}:
                finding("patching", "fail", f"rebinds {dotted} (line {node.lineno}); candidates "
                        "must not patch torch, timing or harness functions", node.lineno)
            elif isinstance(target, ast.Attribute) and target.attr in ("forward", "__call__") and \
                    _dotted(target.value) != "self":
                finding("patching", "fail", f"rebinds a forward method (line {node.lineno})",
                        node.lineno)
        if isinstance(node, ast.Call):
            func = aliases.resolve(_dotted(node.func)) or ""
            if func in ("setattr", "delattr", "builtins.setattr") and node.args:
                first = aliases.resolve(_dotted(node.args[0])) or ""
                if first.split(".")[0] in PROTECTED_ROOTS or (
                        isinstance(node.args[0], ast.Name) and node.args[0].id != "self"):
                    finding("patching", "fail", f"calls {func} on {first or 'an object'} "
                            f"(line {node.lineno}); candidates must not patch modules or classes",
                            node.lineno)
            parts = tuple(func.split(".")[-2:])
            if parts in INTROSPECTION:
                finding("introspection", "fail", f"calls {func} (line {node.lineno}); candidates "
                        "must not inspect the harness's objects or frames", node.lineno)
        if isinstance(node, ast.Attribute) and node.attr == "Model":
            finding("reference_access", "fail", f"reaches for the reference class Model "
                    f"(line {node.lineno})", node.lineno)
        if isinstance(node, ast.Name) and node.id == "Model":
            finding("reference_access", "fail", f"refers to the reference class Model "
                    f"(line {node.lineno})", node.lineno)
        if isinstance(node, ast.Constant) and node.value == "Model":
            finding("reference_access", "fail", f"looks up the reference class Model by name "
                    f"(line {node.lineno})", node.lineno)

    # 3. Tampering with the operator trace, in the code or the embedded C++/CUDA sources.
    for m in TRACE_TAMPERING.finditer(source):
        line = source.count("\n", 0, m.start()) + 1
        finding("trace_tampering", "fail", f"uses {m.group(0)} (line {line}), part of PyTorch's "
                "dispatch-mode machinery; kernelpro traces the operators forward runs with it, and "
                "candidates must not disable, pop or look for that trace", line)
        break

    # 4. Streams and precision, read from the code and the embedded C++/CUDA sources.
    text = source
    if STREAM_CREATE.search(text) and not STREAM_JOIN.search(text):
        finding("side_stream", "fail", "launches work on a stream of its own and never makes the "
                "current stream wait for it (no cudaStreamWaitEvent/wait_stream): the output is "
                "not ready when forward returns")
    elif STREAM_CREATE.search(text):
        finding("side_stream", "warn", "uses additional CUDA streams; timing covers all streams")
    if fp32_problem:
        m = LOW_PRECISION.search(_strings(tree) + "\n" + text)
        if m:
            finding("precision", "warn", f"uses reduced-precision math ({m.group(0)}) in an fp32 "
                    "problem; the fp64-referenced error check decides whether it passes")
    fails = [f for f in findings if f["severity"] == "fail"]
    return {"status": "ok", "findings": findings,
            "message": fails[0]["message"] if fails else ""}


def step_scan(request):
    """The `scan` step: the problem's checks and, with `candidate`, the candidate's against it."""
    with open(request["problem"]) as f:
        problem = scan_problem(f.read(), request["problem"])
    result = {"problem": problem}
    if not problem["ok"]:
        return result
    if request.get("candidate"):
        with open(request["candidate"]) as f:
            result["candidate"] = scan_candidate(
                f.read(), set(problem["reference_ops"]), request.get("torch_ops_policy", "forbid"),
                request.get("allowed_ops", []), request.get("fp32_problem", True),
                request["candidate"])
    return result
