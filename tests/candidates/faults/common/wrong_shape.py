"""Fault (common; tiny_swish on CPU, problems/swish on CUDA): returns only half the output.

Computes a correct swish of the first N//2 elements and returns that, shape (N//2,) instead of
(N,). Values present are correct.
The swish itself is a compiled kernel (C++ loop; a CUDA kernel as well when CUDA is available),
so nothing but the named fault should be held against it.
A correct harness must report: incorrect ("shape": expected (N,), got (N//2,)); it must not
broadcast or crash while comparing.
"""
import torch
import torch.nn as nn

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)



class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x[: x.shape[0] // 2])
