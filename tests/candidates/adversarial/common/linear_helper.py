"""Adversarial (common; target tests/problems/small_linear.py): the GEMM hidden two helper
functions away from forward.

forward calls _apply, a module-level function, which calls _project, which calls torch.addmm.
The static scan reads only ModelNew's methods; the operator that runs is the reference's.
A correct harness reports: incorrect ("forward calls aten.addmm").
"""
import torch
import torch.nn as nn


def _project(x, w, b):
    return torch.addmm(b, x, w.t())


def _apply(x, layer):
    return _project(x, layer.weight, layer.bias)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return _apply(x, self.fc)
