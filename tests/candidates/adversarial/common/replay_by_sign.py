"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): replays by a coarse key.

Keeps its answers keyed on the input's shape and sign pattern, which survive any rescaling of
the values by positive factors, and replays the stored answer for any input with the same
pattern. Every distinct input it is shown first is computed correctly, so its check trials pass;
timed calls whose inputs are rescaled copies of an earlier one get that earlier answer.
A correct harness must report: incorrect, on a timed call ("while being timed: timed call N").
"""
import hashlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)

_CACHE = {}


def _key(x):
    signs = (x.detach() > 0).cpu().contiguous().numpy().tobytes()
    return (tuple(x.shape), hashlib.sha256(signs).hexdigest())


class ModelNew(nn.Module):
    def forward(self, x):
        key = _key(x)
        if key not in _CACHE:
            _CACHE[key] = _ext.swish(x)
        return _CACHE[key].clone()
