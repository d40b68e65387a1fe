"""Correct on tests/problems/tiny_swish.py's benchmark shape only: the compiled swish on x viewed
as the benchmark's 4 x 1024 tiles, so any other size raises (the shape assert of a kernel written
for one size).

A correct harness reports: correct on the benchmark shape, and that it fails the derived shapes
(fixed-shape); with --require-shape-generality, incorrect.
"""
import torch.nn as nn

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x.view(4, 1024)).view(4096)
