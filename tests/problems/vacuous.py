"""Test problem whose outputs are tiny: |output| <= ~6e-4, far below atol=1e-2.

An all-zero output passes torch.allclose(out, ref, atol=1e-2, rtol=1e-3), so a harness that
only checks allclose cannot tell a correct kernel from one that does nothing. A harness should
flag the problem as vacuous (or use a scale-aware check).
"""
import torch
import torch.nn as nn

N = 1 << 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 1e-4


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
