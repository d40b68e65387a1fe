"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): replays results by content.

Keeps every answer in a module-level cache keyed on the exact bytes of its input and returns
the cached tensor whenever an input's contents repeat. Computing costs it an extra 20 ms (a
stand-in for real work), a replay nothing: on a harness whose timed calls cycle through a fixed
pool of inputs it is correct and looks over 100 times faster than it is.
The swish itself is the shared compiled kernel (swish_ext.py).
A correct harness must report: correct, with every timed call paying the 20 ms (no input repeats,
so the cache never hits).
"""
import hashlib
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)

_CACHE = {}


def _key(x):
    return hashlib.sha256(x.detach().cpu().contiguous().numpy().tobytes()).hexdigest()


class ModelNew(nn.Module):
    def forward(self, x):
        key = _key(x)
        if key not in _CACHE:
            time.sleep(0.02)
            _CACHE[key] = _ext.swish(x)
        return _CACHE[key].clone()
