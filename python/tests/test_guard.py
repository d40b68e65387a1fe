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
