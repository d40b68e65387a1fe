"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): fakes its own timer's results.

Its swish is correct (the shared compiled swish), so every check and every sampled timed call
passes. But in its forward calls it walks up the call stack to the harness's timer object in its
own process and rebinds two of each such object's attributes (no module or class is
touched): the device's activity records are dropped (so a GPU falls back to events around the
call) and every timed row it reports is divided by 10,000. The speedup it would claim is
thousands of times; its median time is nanoseconds for kilobytes (CPU) or 64 MiB (CUDA) of input.
A correct harness must report: incorrect, the rebinding caught (the timer names its rebound
attributes after every block), or at least "faster than the speed of light".
"""
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)

_SCALE = 1e-4


def _scaled(run):
    # Whatever the loop's arguments: rows are (timed, host_ms, launch_s, event_ms, ...).
    def fake(*args, **kwargs):
        rows = run(*args, **kwargs)
        return [(row[0], row[1] * _SCALE, row[2], None if row[3] is None else row[3] * _SCALE)
                + tuple(row[4:]) for row in rows]
    return fake


def _fake_the_timer():
    frame = sys._getframe(2)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if type(owner).__name__ == "Timer" and hasattr(owner, "_run"):
            if "_run" not in owner.__dict__:  # each timer the harness makes (events, spans)
                owner.__dict__["tracer"] = None
                owner.__dict__["_run"] = _scaled(owner._run)
            return
        frame = frame.f_back


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        _fake_the_timer()
        return _ext.swish(x)
