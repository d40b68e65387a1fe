"""Fault (common; tiny_swish on CPU, problems/swish on CUDA): every output element is NaN.

Stands for a kernel that reads uninitialised memory or divides by zero. NaN must reach the
comparison as data and leave it as a verdict.
A correct harness reports: incorrect ("output 0 has 4096 NaN values (of 4096)" on tiny_swish).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.full_like(x, float("nan"))
