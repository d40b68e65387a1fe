"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): memoises on x.data_ptr().

Outputs are cached in a module-level dict keyed by the input's data pointer. A fresh tensor
gets a fresh, correct answer; the same buffer refilled with new values (x.copy_(new) or
x.normal_()) gets the stale answer. Passes a harness that allocates new inputs for each trial
or that times repeated calls on one unchanged buffer.
The swish itself is a compiled kernel (C++ loop; a CUDA kernel as well when CUDA is available),
so nothing but the named fault should be held against it.
A correct harness must report: incorrect (when the same buffer is refilled with new values).
"""
import torch
import torch.nn as nn

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)



_CACHE = {}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        key = x.data_ptr()
        if key not in _CACHE:
            _CACHE[key] = _ext.swish(x)
        return _CACHE[key]
