"""Normalisation: RMSNorm over the hidden dimension, written as eager code commonly writes it.

pow, mean, add, rsqrt, two multiplies: six kernels and as many passes over the activations,
where one kernel per row suffices.
"""
import torch
import torch.nn as nn

TOKENS = 4096
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.eps) * self.weight


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, 1e-6]
