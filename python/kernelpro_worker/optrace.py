"""Which torch operators a forward call runs, and the torch-operator policy decided on them.

The static scan (scan.py) reads how a candidate spells its calls; a candidate can call the same
operator in many spellings it does not recognise (torch.X, torch.nn.functional.X, a tensor
method, `@`, an nn module, a helper in another function, at::X from C++). Every spelling ends in
the same place: the aten operator the dispatcher runs. OpTrace records those with a
TorchDispatchMode (torch >= 1.13), which sees the operators after autograd and composite
decomposition, whether Python or an extension's C++ called them: nn.Linear and F.linear arrive
as addmm, `x @ w` as mm, F.silu as silu.

The reference step records the reference's operators; the check step traces the candidate's
forward calls and `reference_op_findings` compares the two:

    forbidden = (candidate's operators that are the reference's, or substitute for one of them)
                - structural operators (allocation, views, copies) - the user's --allow-torch-op

"Substitute" covers the families in which torch routes one computation to different operators
depending on shapes and spelling (gemm: mm/addmm/bmm/matmul...; convolution; softmax;
normalisation): a candidate calling aten.mm for a reference whose nn.Linear ran aten.addmm is
doing the reference's matrix product with torch's kernel all the same.
"""

from .analyze import _CONV_OPS, _GEMM_OPS, _NORM_OPS, _SOFTMAX_OPS

# Operators that allocate, reshape, view or copy: never "the reference's computation", even when
# the reference runs them too. Kept short on purpose: anything else the reference computes with
# counts.
STRUCTURAL_OPS = frozenset({
    # allocation (plus every empty*/zeros*/full*/new_* below)
    "fill_", "fill", "zero_", "zero", "lift_fresh", "lift_fresh_copy", "_local_scalar_dense",
    # views and layout
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "t", "transpose",
    "permute", "expand", "squeeze", "unsqueeze", "select", "slice", "alias", "detach",
    "contiguous",
    # copies
    "copy_", "clone", "_to_copy", "to",
})
STRUCTURAL_PREFIXES = ("empty", "zeros", "full", "new_empty", "new_zeros", "new_full")

# Families whose members compute the same thing for different shapes or spellings.
SUBSTITUTES = {"gemm": _GEMM_OPS, "convolution": _CONV_OPS, "softmax": _SOFTMAX_OPS,
               "normalization": _NORM_OPS}

# --allow-torch-op spellings that name several aten operators.
_ALIASES = {
    "matmul": {"matmul", "mm", "bmm", "addmm", "baddbmm", "mv", "addmv", "dot"},
    "linear": {"linear", "addmm", "mm", "matmul", "bmm", "baddbmm"},
    "einsum": {"einsum", "bmm", "mm"},
    "softmax": {"softmax", "_softmax", "_safe_softmax"},
    "log_softmax": {"log_softmax", "_log_softmax"},
    "layer_norm": {"layer_norm", "native_layer_norm"},
    "layernorm": {"layer_norm", "native_layer_norm"},
    "group_norm": {"group_norm", "native_group_norm"},
    "groupnorm": {"group_norm", "native_group_norm"},
    "rms_norm": {"rms_norm", "_fused_rms_norm"},
    "rmsnorm": {"rms_norm", "_fused_rms_norm"},
    "scaled_dot_product_attention": {op for op in _GEMM_OPS if "attention" in op},
}
for _name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "convolution", "convtranspose1d", "convtranspose2d",
              "convtranspose3d"):
    _ALIASES[_name] = set(_CONV_OPS)
for _name in ("batch_norm", "batchnorm1d", "batchnorm2d", "batchnorm3d"):
    _ALIASES[_name] = {op for op in _NORM_OPS if "batch_norm" in op}


def is_structural(op):
    return op in STRUCTURAL_OPS or op.startswith(STRUCTURAL_PREFIXES)


def _base(op):
    """'add_' -> 'add': an in-place variant computes what its functional form does."""
    return op[:-1] if op.endswith("_") and not op.endswith("__") else op


def allowed_aten_ops(names):
    """The aten operator names that --allow-torch-op values stand for. Accepts aten names
    ("addmm", "aten.addmm.default") and common torch spellings ("torch.matmul", "F.linear",
    "nn.Linear", "Tensor.softmax")."""
    allowed = set()
    for raw in names:
        name = raw.strip()
        for prefix in ("torch.nn.functional.", "torch.Tensor.", "torch.nn.", "torch.ops.aten.",
                       "torch.", "aten.", "F.", "nn.", "Tensor."):
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        name = name.split(".")[0]  # an overload: addmm.default
        if not name:
            continue
        name = name.lower()  # aten names are lower case; nn.Linear means linear
        allowed |= _ALIASES.get(name, set()) | {name, _base(name), _base(name) + "_"}
    return allowed


def _family(op):
    base = _base(op)
    for family, members in SUBSTITUTES.items():
        if op in members or base in members:
            return family
    return None


def reference_op_findings(candidate_ops, reference_ops, policy, allowed_ops):
    """Findings for the candidate's operators that compute what the reference computes.

    candidate_ops: {aten name: call count}; reference_ops: the reference's aten names;
    policy: 'forbid' (fail findings), 'warn' (warn findings) or 'allow' (none)."""
    if policy == "allow" or not reference_ops:
        return []
    allowed = allowed_aten_ops(allowed_ops)
    reference = {op for op in reference_ops if not is_structural(op)}
    reference_bases = {_base(op): op for op in reference}
    families = {}
    for op in sorted(reference):
        families.setdefault(_family(op), op)
    findings = []
    for op in sorted(candidate_ops):
        if is_structural(op) or op in allowed or _base(op) in allowed:
            continue
        fix = (f"write the computation yourself (policy '{policy}'; allow it with "
               f"--allow-torch-op {_base(op)})")
        if _base(op) in reference_bases:
            message = f"forward calls aten.{op}, an operator the reference uses; {fix}"
        else:
            family = _family(op)
            if family is None or family not in families:
                continue
            message = (f"forward calls aten.{op}, which does the reference's {family} (the "
                       f"reference calls aten.{families[family]}); {fix}")
        findings.append({"rule": "reference_op",
                         "severity": "fail" if policy == "forbid" else "warn",
                         "line": 0, "message": message})
    return findings


def op_name(func):
    """'addmm' for aten.addmm.default (the overload packet's name)."""
    packet = getattr(func, "overloadpacket", None)
    return packet.__name__ if packet is not None else str(func)


class OpTrace:
    """Context manager recording the aten operators run inside it into `ops` ({name: calls}).

    On a torch without TorchDispatchMode it records nothing and `available` is False. `tampered`
    says the trace could not be closed the way it was opened: code inside it removed the mode
    (a candidate evading the trace)."""

    def __init__(self, ops=None):
        self.ops = {} if ops is None else ops
        self.available = _mode_class() is not None
        self.tampered = ""
        self._mode = None

    def __enter__(self):
        cls = _mode_class()
        if cls is not None:
            self._mode = cls(self.ops)
            self._mode.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._mode is None:
            return False
        try:
            self._mode.__exit__(exc_type, exc, tb)
        except Exception as e:  # noqa: BLE001 - the mode stack is not as this trace left it
            self.tampered = f"{type(e).__name__}: {e}"
        self._mode = None
        return False


_MODE_CLASS = []


def _mode_class():
    if not _MODE_CLASS:
        try:
            from torch.utils._python_dispatch import TorchDispatchMode
        except ImportError:
            _MODE_CLASS.append(None)
        else:
            class RecordingMode(TorchDispatchMode):
                def __init__(self, ops):
                    super().__init__()
                    self.ops = ops

                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    name = op_name(func)
                    self.ops[name] = self.ops.get(name, 0) + 1
                    return func(*args, **(kwargs or {}))

            _MODE_CLASS.append(RecordingMode)
    return _MODE_CLASS[0]
