"""Broken test problem: get_inputs() raises (a data file that is not there, say).

The harness must refuse it at once, naming get_inputs and its error, before any candidate is
built (issue 43: the error came only after the candidate's 20 s build).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    raise FileNotFoundError("inputs.npy: no such file")


def get_init_inputs():
    return []
