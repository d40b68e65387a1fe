"""Test problem whose reference is nondeterministic: dropout in training mode.

Two runs of the reference on the same input disagree (a different half of the elements is
zeroed each time), so no candidate can be checked against it. A harness should notice that
the reference does not agree with itself and report the problem as broken/nondeterministic.
"""
import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.dropout(x, p=0.5, training=True)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
