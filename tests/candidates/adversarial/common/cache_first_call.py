"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): replays its first answer.

The first call computes a correct swish and keeps the result in a module-level cache; every
later call, from any instance, returns that cached tensor whatever x is. Passes a harness that
checks only one input, or that times repeated calls on one input.
The swish itself is a compiled kernel (C++ loop; a CUDA kernel as well when CUDA is available),
so nothing but the named fault should be held against it.
A correct harness must report: incorrect (wrong on a second, different input).
"""
import torch
import torch.nn as nn

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)



_CACHE = []


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if not _CACHE:
            _CACHE.append(_ext.swish(x))
        return _CACHE[0]
