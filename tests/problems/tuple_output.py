"""Test problem with a tuple output: (x + 1, x.sum(dim=-1)), shapes (64, 128) and (64,).

Exercises comparison of multi-output models: each element must be checked for shape, dtype
and values.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return (x + 1, x.sum(dim=-1))


def get_inputs():
    return [torch.randn(64, 128)]


def get_init_inputs():
    return []
