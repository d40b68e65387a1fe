"""Adversarial (common, target tests/problems/vacuous.py): returns zeros without computing.

On a problem whose outputs are far smaller than atol, an all-zero tensor passes
allclose(atol=1e-2). A correct harness warns that the problem is vacuous and also holds
outputs to a relative error bound: incorrect.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
