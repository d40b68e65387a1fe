"""Elementwise: Swish (SiLU) as two ops, x * sigmoid(x); a copy of problems/swish with N = 4096.

A fast problem for CPU tests of the harness.
"""
import torch
import torch.nn as nn

N = 1 << 12


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
