"""The runtime guard sees functions a candidate rebinds."""

import time

import torch

from kernelpro_worker.guard import PatchGuard


def test_guard_names_rebound_functions_and_nothing_else():
    guard = PatchGuard()
    assert guard.changed() == []
    original_perf, original_allclose = time.perf_counter, torch.allclose
    try:
        time.perf_counter = lambda: 0.0
        torch.allclose = lambda *a, **k: True
        assert guard.changed() == ["time.perf_counter", "torch.allclose"]
    finally:
        time.perf_counter, torch.allclose = original_perf, original_allclose
    assert guard.changed() == []


def test_guard_sees_patched_worker_functions():
    from kernelpro_worker import tensors

    guard = PatchGuard()
    original = tensors.compare_output
    try:
        tensors.compare_output = lambda *a, **k: {"passed": True}
        assert "kernelpro_worker.tensors.compare_output" in guard.changed()
    finally:
        tensors.compare_output = original


def test_torchs_own_dynamo_wrapper_around_manual_seed_is_not_a_patch(monkeypatch):
    # torch 2 does `torch.manual_seed = torch._disable_dynamo(torch.manual_seed)` when
    # torch._dynamo is first imported; a run that triggers it is not the candidate's patch.
    import torch
    from kernelpro_worker.guard import PatchGuard

    if not hasattr(torch, "_disable_dynamo"):
        def _disable_dynamo(fn):
            import functools

            @functools.wraps(fn)
            def inner(*args, **kwargs):
                return fn(*args, **kwargs)
            return inner
        monkeypatch.setattr(torch, "_disable_dynamo", _disable_dynamo, raising=False)
    original = torch.manual_seed
    guard = PatchGuard()
    monkeypatch.setattr(torch, "manual_seed", torch._disable_dynamo(original))
    assert "torch.manual_seed" not in guard.changed()


def test_a_look_alike_wrapper_around_something_else_is_a_patch(monkeypatch):
    import functools

    import torch
    from kernelpro_worker.guard import PatchGuard

    original = torch.manual_seed
    guard = PatchGuard()

    @functools.wraps(original)
    def fake(*args, **kwargs):
        return None

    monkeypatch.setattr(torch, "manual_seed", fake)
    assert "torch.manual_seed" in guard.changed()


def test_guard_sees_a_replaced_code_object_behind_an_unchanged_function():
    from kernelpro_worker import tensors
    from kernelpro_worker.timing import Timer

    guard = PatchGuard()
    original_compare, original_run = tensors.compare_output.__code__, Timer._run.__code__
    try:
        # The function objects stay the same; only what they run changes.
        tensors.compare_output.__code__ = (lambda *a, **k: {"passed": True}).__code__
        Timer._run.__code__ = (lambda self, calls, sample_p, keep: []).__code__
        assert guard.changed() == ["kernelpro_worker.tensors.compare_output",
                                   "kernelpro_worker.timing.Timer._run"]
    finally:
        tensors.compare_output.__code__, Timer._run.__code__ = original_compare, original_run
    assert guard.changed() == []


def test_the_timers_own_loop_is_watched_at_class_level():
    from kernelpro_worker.timing import Timer

    guard = PatchGuard()
    original = Timer._run
    try:
        Timer._run = lambda self, calls, sample_p, keep: []
        assert guard.changed() == ["kernelpro_worker.timing.Timer._run"]
    finally:
        Timer._run = original
    assert guard.changed() == []


def test_the_gate_and_the_reading_of_gated_calls_are_watched():
    from kernelpro_worker import gate, timing

    guard = PatchGuard()
    originals = gate.Gate.close, timing.read_call
    try:
        gate.Gate.close = lambda self: None  # no gate: every call would look ungated
        timing.read_call = lambda records, gated: {"span_ns": (0, 1)}  # forged spans
        assert guard.changed() == ["kernelpro_worker.gate.Gate.close",
                                   "kernelpro_worker.timing.read_call"]
    finally:
        gate.Gate.close, timing.read_call = originals
    assert guard.changed() == []
