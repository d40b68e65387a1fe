"""Elementwise: Swish (SiLU) as two ops, x * sigmoid(x): problems/swish at the CPU demo's size.

The same module as problems/swish/problem.py on 2^20 elements (4 MiB) rather than 2^24 (64 MiB),
so that `kernelpro optimize --demo --device cpu` checks and times its kernels in seconds on a
2-core machine; the GPU demo keeps the full size.
"""
import torch
import torch.nn as nn

N = 1 << 20


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
