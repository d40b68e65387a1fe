"""The runtime of a package `kernelpro export` wrote (docs/export.md in kernelpro).

It is the same file in every exported package; what differs is data beside it: export.json (the
problem, the candidate, its extensions, the outputs, the verdict) and guards.json (the devices,
dtypes and input shapes the kernel was verified on). It
  - imports the candidate's file as it was evaluated (candidate.py, verbatim) with
    torch.utils.cpp_extension.load_inline shimmed to return the extension this package built at
    install time (by name, else by call order), so no source is rewritten;
  - registers the operator torch.ops.kernelpro.<op>(inputs, impl_state, ref_state): with
    torch.library.custom_op and a fake (meta) implementation on torch >= 2.4, else through
    torch.library.Library (torch.compile of it needs torch >= 2.4);
  - dispatches each call: the candidate's ModelNew where the guards allow the call (device type,
    dtypes, shapes, contiguous tensors), the reference Model otherwise. Both run through
    functional_call on the state the caller passes, so a compiler sees tensors only.
"""

import contextlib
import copy
import importlib
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = __name__.rsplit(".", 1)[0]


def _read(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return json.load(f)


META = _read("export.json")
GUARDS = _read("guards.json")
OP_NAME = META["op_name"]
QUALNAME = "kernelpro::" + OP_NAME
N_OUTPUTS = int(META["outputs"])
SCHEMA = ("(Tensor[] inputs, Tensor[] impl_state, Tensor[] ref_state) -> "
          + ("Tensor" if N_OUTPUTS == 1 else "(" + ", ".join(["Tensor"] * N_OUTPUTS) + ")"))
# Calls of the operator by the path taken, for tests and for people who want to know.
STATS = {"kernel": 0, "reference": 0}

try:  # torch >= 2.0
    from torch.func import functional_call as _functional_call
except ImportError:  # torch 1.13
    from torch.nn.utils.stateless import functional_call as _functional_call


# ---- the candidate and the reference, imported from the package

def _prebuilt(name, index):
    """The extension this package built for load_inline(name=...): by name, else the index-th
    call (a candidate may make its names up at import)."""
    extensions = META["extensions"]
    entry = next((e for e in extensions if e["name"] == name), None)
    if entry is None and index < len(extensions):
        entry = extensions[index]
    if entry is None:
        raise ImportError(f"{PACKAGE}: the candidate calls load_inline(name={name!r}), which "
                          "kernelpro export did not capture")
    return importlib.import_module(f"{PACKAGE}._ext.{entry['name']}")


@contextlib.contextmanager
def shimmed_load_inline():
    """torch.utils.cpp_extension.load_inline returns the prebuilt extensions while it is on."""
    from torch.utils import cpp_extension

    real = cpp_extension.load_inline
    calls = [0]

    def load_inline(name, *args, **kwargs):
        calls[0] += 1
        return _prebuilt(name, calls[0] - 1)

    cpp_extension.load_inline = load_inline
    try:
        yield
    finally:
        cpp_extension.load_inline = real


_MODULES = {}


def candidate_module():
    """The candidate's file (candidate.py), imported once with the shim on."""
    if "candidate" not in _MODULES:
        with shimmed_load_inline():
            _MODULES["candidate"] = importlib.import_module(PACKAGE + ".candidate")
    return _MODULES["candidate"]


def reference_module():
    """The problem's file (reference.py): Model, get_inputs(), get_init_inputs()."""
    if "reference" not in _MODULES:
        _MODULES["reference"] = importlib.import_module(PACKAGE + ".reference")
    return _MODULES["reference"]


def seeded(cls, args, kwargs=None):
    """cls(*args) under the seed kernelpro's harness constructs both models with, without
    touching the caller's random state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(META["init_seed"]))
        with shimmed_load_inline():
            return cls(*args, **(kwargs or {}))


def benchmark_init_inputs():
    """get_init_inputs() as the harness calls it (under the init seed)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(META["init_seed"]))
        return list(reference_module().get_init_inputs())


def benchmark_inputs(device="cpu"):
    """get_inputs() under the init seed, tensors moved to `device`."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(META["init_seed"]))
        values = list(reference_module().get_inputs())
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def state_names(module):
    return [n for n, _ in module.named_parameters()] + [n for n, _ in module.named_buffers()]


def state(module):
    return [t for _, t in module.named_parameters()] + [t for _, t in module.named_buffers()]


_TEMPLATES = {}


def _templates():
    """One ModelNew and one Model of the benchmark's init inputs, whose structure the operator
    calls with the state it is given (their own parameters, on the meta device, are never used)."""
    if not _TEMPLATES:
        init = benchmark_init_inputs()
        for key, cls in (("impl", candidate_module().ModelNew), ("ref", reference_module().Model)):
            model = seeded(cls, init)
            try:
                model = model.to("meta")
            except Exception:  # noqa: BLE001 - a module that cannot move keeps its CPU tensors
                pass
            _TEMPLATES[key] = (model, state_names(model))
    return _TEMPLATES


# ---- guards

def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def signature(args):
    """[{"shape": [...], "dtype": "float32"} or None] of a call's arguments."""
    return [{"shape": list(a.shape), "dtype": _dtype_name(a.dtype)}
            if isinstance(a, torch.Tensor) else None for a in args]


def _in_family(sig, family):
    if len(sig) != len(family["ranks"]):
        return False
    for s, rank, dtype in zip(sig, family["ranks"], family["dtypes"]):
        if (s is None) != (rank is None):
            return False
        if s is not None and (len(s["shape"]) != rank or s["dtype"] != dtype):
            return False
    return True


def allowed(args):
    """Whether the kernel was verified for a call with these arguments (guards.json)."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if any(t.device.type not in GUARDS["devices"] for t in tensors):
        return False
    if GUARDS.get("contiguous", True) and any(not t.is_contiguous() for t in tensors):
        return False
    sig = signature(args)
    return sig in GUARDS["exact"] or any(_in_family(sig, f) for f in GUARDS["families"])


# ---- the operator

def _args(inputs):
    """The forward's arguments: the tensors given, the non-tensor inputs as exported."""
    args, it = [], iter(inputs)
    for spec in META["inputs"]:
        args.append(next(it) if spec["tensor"] else spec["value"])
    return args


def _outputs(out, inputs):
    """A tensor or a tuple of N_OUTPUTS fresh tensors (an operator's outputs alias nothing)."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(outs) != N_OUTPUTS:
        raise RuntimeError(f"{QUALNAME}: the model returned {len(outs)} outputs, the operator "
                           f"declares {N_OUTPUTS}")
    seen = [t for t in inputs if isinstance(t, torch.Tensor)]
    fresh = []
    for t in outs:
        if any(_overlaps(t, s) for s in seen):
            t = t.clone()
        seen.append(t)
        fresh.append(t)
    return fresh[0] if N_OUTPUTS == 1 else tuple(fresh)


def _overlaps(a, b):
    try:
        return a.data_ptr() == b.data_ptr() and a.data_ptr() != 0
    except Exception:  # noqa: BLE001 - fake tensors have no storage to compare
        return a is b


_BOUND = {}  # (key, ids of the state tensors) -> (a template holding exactly them, the tensors)
_BOUND_MAX = 8


def _bound(key, model, names, state_tensors):
    """A copy of the template whose parameters and buffers are the given tensors themselves, kept
    for the next call with the same tensors: functional_call's reparametrisation costs tens of
    microseconds per call, a module that already holds its state costs nothing. The entry keeps
    the tensors alive, so their ids cannot be reused while it is cached."""
    ident = (key,) + tuple(id(t) for t in state_tensors)
    entry = _BOUND.get(ident)
    if entry is None:
        bound = copy.deepcopy(model)
        for name, tensor in zip(names, state_tensors):
            owner_name, _, attr = name.rpartition(".")
            owner = bound.get_submodule(owner_name) if owner_name else bound
            table = owner._parameters if attr in owner._parameters else owner._buffers
            table[attr] = tensor
        if len(_BOUND) >= _BOUND_MAX:
            _BOUND.pop(next(iter(_BOUND)))
        entry = _BOUND[ident] = (bound, tuple(state_tensors))
    return entry[0]


def _run(key, state_tensors, args, reuse=False):
    model, names = _templates()[key]
    if not names:  # no parameters or buffers: functional_call's reparametrisation costs time
        return model(*args)
    if reuse:
        return _bound(key, model, names, state_tensors)(*args)
    return _functional_call(model, dict(zip(names, state_tensors)), tuple(args))


def _impl(inputs, impl_state, ref_state):
    args = _args(inputs)
    with torch.no_grad():
        if allowed(args):
            STATS["kernel"] += 1
            out = _run("impl", impl_state, args, reuse=True)
        else:
            STATS["reference"] += 1
            out = _run("ref", ref_state, args, reuse=True)
    return _outputs(out, inputs)


def _fake(inputs, impl_state, ref_state):
    """Shapes and dtypes of the outputs: the reference run on the fake inputs and state."""
    return _outputs(_run("ref", ref_state, _args(inputs)), inputs)


def _register():
    """The operator, registered once per process. Another package's operator of the same name
    (the same problem exported from another candidate) is refused: one process, one owner."""
    owners = getattr(torch.library, "_kernelpro_export_owners", {})
    torch.library._kernelpro_export_owners = owners
    if owners.get(OP_NAME, PACKAGE) != PACKAGE:
        raise ImportError(f"{PACKAGE}: torch.ops.kernelpro.{OP_NAME} is already registered by "
                          f"{owners[OP_NAME]}; import one of them per process")
    if OP_NAME in owners:
        return getattr(torch.ops.kernelpro, OP_NAME)
    owners[OP_NAME] = PACKAGE
    if hasattr(torch.library, "custom_op"):  # torch >= 2.4
        op = torch.library.custom_op(QUALNAME, _impl, mutates_args=(), schema=SCHEMA)
        op.register_fake(_fake)
        return getattr(torch.ops.kernelpro, OP_NAME)
    lib = _library()
    lib.define(OP_NAME + SCHEMA)
    lib.impl(OP_NAME, _impl, "CompositeExplicitAutograd")
    try:  # torch 2.0 to 2.3: a Meta kernel lets torch.compile trace the call
        lib.impl(OP_NAME, _fake, "Meta")
    except Exception:  # noqa: BLE001 - older torch: no compile to trace for
        pass
    return getattr(torch.ops.kernelpro, OP_NAME)


def _library():
    """The one torch.library.Library of the kernelpro namespace in this process, shared by every
    exported package (torch < 2.4 allows a single DEF library per namespace)."""
    lib = getattr(torch.library, "_kernelpro_export_library", None)
    if lib is None:
        try:
            lib = torch.library.Library("kernelpro", "FRAGMENT")
        except (ValueError, RuntimeError):
            lib = torch.library.Library("kernelpro", "DEF")
        torch.library._kernelpro_export_library = lib
    return lib


OP = _register()


# ---- the public module

def _same_values(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    return list(a) == list(b)


class Model(torch.nn.Module):
    """The problem's Model with the same constructor, its forward calling the operator. Built
    with the benchmark's init inputs (those the kernel was verified with) it holds the
    candidate's ModelNew and the reference's Model, each seeded as kernelpro's harness seeds them;
    built with other arguments it is the reference alone."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.ref = seeded(reference_module().Model, args, kwargs)
        exported = META.get("init_inputs")
        self.uses_kernel = not kwargs and (exported is None or _same_values(args, exported))
        if self.uses_kernel:
            self.impl = seeded(candidate_module().ModelNew, args)

    def forward(self, *args):
        if not self.uses_kernel or not _matches_constants(args):
            return self.ref(*args)
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        return OP(tensors, state(self.impl), state(self.ref))


def _matches_constants(args):
    """The call has the exported inputs' layout: tensors where tensors were, the same
    non-tensor values elsewhere."""
    if len(args) != len(META["inputs"]):
        return False
    for a, spec in zip(args, META["inputs"]):
        if spec["tensor"] != isinstance(a, torch.Tensor):
            return False
        if not spec["tensor"] and a != spec["value"]:
            return False
    return True


def from_benchmark():
    """Model(*get_init_inputs()), the instance the kernel was measured with."""
    return Model(*benchmark_init_inputs())


sys.modules.setdefault(PACKAGE + "._runtime", sys.modules[__name__])
