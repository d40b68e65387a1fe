"""Broken test problem: get_inputs/get_init_inputs but no `Model` class.

The harness must report the problem as invalid (no Model), not crash or blame the candidate.
"""
import torch
import torch.nn as nn


class Reference(nn.Module):  # wrong name on purpose
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(1024)]


def get_init_inputs():
    return []
