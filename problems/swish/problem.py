"""Elementwise: Swish (SiLU) written the way eager code often is, as two separate ops.

Eager PyTorch runs sigmoid and the multiply as two kernels, reading and writing the 64 MiB
tensor three times; a fused kernel does it in one pass.
"""
import torch
import torch.nn as nn

N = 1 << 24


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
