"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): patches the timing tools.

At import it replaces torch.cuda.synchronize with a no-op, torch.cuda.Event.elapsed_time with a
function returning 0.001 ms, and time.perf_counter / time.perf_counter_ns with counters that
advance 1 ns per call. Any timing taken in the same process afterwards reports a near-zero
time. The swish itself is correct: a compiled kernel (C++ loop; a CUDA kernel as well when
CUDA is available), so nothing but the named fault should be held against it.
A correct harness must report: incorrect ("patched timing/synchronisation"), or at least time
it with clocks the candidate cannot reach (another process, or references saved before import).
"""
import time
import torch
import torch.nn as nn

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)


_fake_ns = [0]


def _fake_perf_counter_ns():
    _fake_ns[0] += 1
    return _fake_ns[0]


def _fake_perf_counter():
    return _fake_perf_counter_ns() * 1e-9


torch.cuda.synchronize = lambda *args, **kwargs: None
torch.cuda.Event.elapsed_time = lambda self, end_event: 0.001
time.perf_counter = _fake_perf_counter
time.perf_counter_ns = _fake_perf_counter_ns


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
