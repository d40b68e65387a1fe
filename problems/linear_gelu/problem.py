"""Fused GEMM + epilogue: a narrow projection (K = 32) followed by bias, GELU, scale and clamp.

With K this small the GEMM is cheap; eager spends most of its time on the epilogue, which
re-reads and re-writes the 128 MiB output once per op. A kernel that applies the epilogue in
registers writes the output once.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
IN_FEATURES = 32
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float, bound: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.bound = bound

    def forward(self, x):
        y = self.linear(x)
        y = F.gelu(y)
        y = y * self.scale
        return torch.clamp(y, -self.bound, self.bound)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, 1.5, 3.0]
