"""Fault (common; tiny_swish on CPU, problems/swish on CUDA): floods stdout, then answers correctly.

Every forward call writes 5,000,000 lines of 100 bytes (99 chars + newline: 500 MB) to
sys.stdout, flushing every 10,000 lines, then returns a correct swish (about 30 s per call on a
2-core CPU machine when the output goes to a pipe that is drained).
The swish itself is a compiled kernel (C++ loop; a CUDA kernel as well when CUDA is available),
so nothing but the named fault should be held against it.
A correct harness must report: runtime_error ("printed too much"), or at the very least not
hang, not buffer it all in memory, and not blow its own time or memory limits.
"""
import sys
import torch
import torch.nn as nn

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)



_LINE = "x" * 99 + "\n"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = sys.stdout
        for i in range(5_000_000):
            out.write(_LINE)
            if i % 10_000 == 0:
                out.flush()
        out.flush()
        return _ext.swish(x)
