"""Adversarial (common, target tests/problems/relu_rand.py): "ReLU" that is the identity.

forward returns x.clone(). The problem's own inputs are torch.rand (all >= 0), where relu(x) == x,
so it matches the reference exactly on them.
A correct harness must report: incorrect (caught by extra trials with signed inputs, e.g. randn).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.clone()
