"""Detects a candidate that patches what the harness relies on.

Timing and output capture must run in the candidate's process, so a candidate could replace
torch.cuda.synchronize, CUDA event timing, clocks, the operator trace or the worker's own functions
at import. The worker takes references to everything it uses before the candidate is imported and,
after each phase, checks that none of these names was rebound or had its attributes replaced.
"""

import sys

# Dotted names whose identity must not change while a candidate runs.
WATCHED = [
    "time.perf_counter", "time.perf_counter_ns", "time.time", "time.monotonic", "time.sleep",
    "torch.allclose", "torch.equal", "torch.isclose", "torch.testing.assert_close",
    "torch.manual_seed", "torch.empty", "torch.empty_like",
    "torch.Tensor.copy_", "torch.Tensor.cpu", "torch.Tensor.to", "torch.Tensor.clone",
    "torch.Tensor.data_ptr", "torch.Tensor.untyped_storage", "torch.Tensor.__eq__",
    "torch.nn.Module.__call__", "torch.nn.Module._call_impl",
    "torch.cuda.synchronize", "torch.cuda.current_stream", "torch.cuda.Event",
    "torch.cuda.Event.record", "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize",
    "torch.cuda.Event.query", "torch.cuda.Stream", "torch.cuda.Stream.synchronize",
    "torch._C._cuda_synchronize",
    # The operator trace of the torch-operator policy (optrace.py).
    "torch.utils._python_dispatch.TorchDispatchMode.__enter__",
    "torch.utils._python_dispatch.TorchDispatchMode.__exit__",
    "kernelpro_worker.optrace.OpTrace.__enter__", "kernelpro_worker.optrace.OpTrace.__exit__",
    # The device's activity records that time each call (timing.py).
    "torch.profiler.profile", "torch.profiler.profile.__enter__", "torch.profiler.profile.__exit__",
    "torch.profiler.profile.start", "torch.profiler.profile.stop",
    "torch.autograd.profiler.profile.__enter__", "torch.autograd.profiler.profile.__exit__",
    "torch.autograd._enable_profiler", "torch.autograd._disable_profiler",
    "kernelpro_worker.timing._device_records",
    "kernelpro_worker.timing.tracer_for", "kernelpro_worker.timing.SpanTracer.mark",
    "kernelpro_worker.timing.SpanTracer.open", "kernelpro_worker.timing.SpanTracer.close",
    "kernelpro_worker.timing.Timer._one", "kernelpro_worker.timing.Timer._traced",
    "kernelpro_worker.timing.Timer.block", "kernelpro_worker.timing.Timer._run",
    "kernelpro_worker.timing.Timer.prepare", "kernelpro_worker.timing.Timer.forward",
    "kernelpro_worker.timing.Timer.warm_up", "kernelpro_worker.timing.Timer._refill",
    "kernelpro_worker.timing.split", "kernelpro_worker.timing.read_call",
    "kernelpro_worker.timing.Timer._gate_missed",
    # The gate that queues each timed call's launches (gate.py).
    "torch.cuda._sleep", "kernelpro_worker.gate.read_call", "kernelpro_worker.gate.busy_ns",
    "kernelpro_worker.gate.is_gate", "kernelpro_worker.gate._gate_and_work",
    "kernelpro_worker.gate.Gate.close",
    "kernelpro_worker.gate.Gate.size", "kernelpro_worker.gate.Gate.lengthen",
    "kernelpro_worker.gate.Gate.calibrate", "kernelpro_worker.gate.Gate.cycles",
    "kernelpro_worker.gate.launched_after_release", "kernelpro_worker.timing._launch_ends",
]


def _resolve(dotted):
    parts = dotted.split(".")
    obj = sys.modules.get(parts[0])
    for part in parts[1:]:
        if obj is None:
            return None
        obj = getattr(obj, part, None)
    return obj


def _dynamo_wrapper_code():
    """The code of the wrapper torch 2 puts around torch.manual_seed the first time torch._dynamo
    is imported (torch._disable_dynamo), which the operator trace or torch itself may trigger
    while a candidate runs; None on a torch without it."""
    torch = sys.modules.get("torch")
    disable = getattr(torch, "_disable_dynamo", None)
    try:
        return disable(lambda: None).__code__ if disable else None
    except Exception:  # noqa: BLE001 - another torch, another signature: no such wrapper
        return None


def _cells(function):
    values = []
    for cell in getattr(function, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    return values


def _unchanged(current, original, wrapper_code):
    """`current` is `original`, or torch's own dynamo-disabling wrapper around exactly it (same
    code object, wrapping nothing but `original`): that rebinding is torch's, not a candidate's."""
    if current is original:
        return True
    if wrapper_code is None or getattr(current, "__code__", None) is not wrapper_code:
        return False
    if getattr(current, "__wrapped__", None) is not original:
        return False
    return all(value is original for value in _cells(current) if callable(value))


def _code(obj):
    """A Python function's code object (None for anything else): replacing it changes what the
    function does while the function object, which the identity checks see, stays the same."""
    return getattr(obj, "__code__", None)


class PatchGuard:
    """Snapshot of watched callables and of the worker's own module globals, with their code
    objects. The objects are kept, not their ids, so that an id reused after garbage collection
    cannot hide a change."""

    def __init__(self):
        self._wrapper_code = _dynamo_wrapper_code()
        self._watched = {name: _resolve(name) for name in WATCHED}
        self._worker = {}
        for mod_name, module in list(sys.modules.items()):
            if mod_name.startswith("kernelpro_worker") and module is not None:
                for attr, value in vars(module).items():
                    if callable(value):
                        self._worker[f"{mod_name}.{attr}"] = value
        self._codes = {name: _code(obj) for name, obj in
                       list(self._watched.items()) + list(self._worker.items())}

    def _recoded(self, name, current, original):
        return current is original and _code(current) is not self._codes.get(name)

    def changed(self):
        """Names rebound (or whose code was replaced) since the snapshot, sorted."""
        names = []
        for n, original in self._watched.items():
            current = _resolve(n)
            if (not _unchanged(current, original, self._wrapper_code)
                    or self._recoded(n, current, original)):
                names.append(n)
        for dotted, original in self._worker.items():
            mod_name, attr = dotted.rsplit(".", 1)
            module = sys.modules.get(mod_name)
            current = getattr(module, attr, None) if module is not None else None
            if current is not original or self._recoded(dotted, current, original):
                names.append(dotted)
        return sorted(set(names))
