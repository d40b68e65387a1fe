"""Normalisation: LayerNorm over the last dimension with a learned scale and shift.

Eager PyTorch already runs this as one kernel (native_layer_norm), so the room left is how close
a kernel gets to one read and one write of the 64 MiB activations: a level-1 op where a good
kernel ties eager rather than beats it by much.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.hidden = hidden
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden))

    def forward(self, x):
        return F.layer_norm(x, (self.hidden,), self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, 1e-5]
