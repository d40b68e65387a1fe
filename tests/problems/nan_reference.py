"""A broken problem: the reference takes the log of signed inputs, so about half of its outputs
are NaN.

No candidate can be checked against NaN. A correct harness reports a problem error naming the
output and the trial ("the reference's output 0 on trial check_0 has ... NaN values; a reference
must produce finite outputs"), not a crash of its own and not a verdict on the candidate.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log(x)


def get_inputs():
    return [torch.randn(4096)]


def get_init_inputs():
    return []
