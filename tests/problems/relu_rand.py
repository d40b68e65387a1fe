"""Test problem: ReLU whose own inputs are all non-negative (torch.rand), the classic hole.

On these inputs relu(x) == x, so an identity "kernel" matches the reference exactly; only
extra trials with signed inputs (randn) tell the two apart.
"""
import torch
import torch.nn as nn

N = 1 << 20


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(N)]


def get_init_inputs():
    return []
