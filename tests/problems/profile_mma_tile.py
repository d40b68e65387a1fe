"""Profiling target (GPU only): one 64x64x16 half-precision tile product.

Exists so `kernelpro profile` can record a kernel that issues Hopper warpgroup MMA
(tests/candidates/profile/wgmma_tile.py); it is not an optimisation problem.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a.float().view(64, 16) @ b.float().view(64, 16).t()


def get_inputs():
    return [torch.randn(64 * 16).half(), torch.randn(64 * 16).half()]


def get_init_inputs():
    return []
