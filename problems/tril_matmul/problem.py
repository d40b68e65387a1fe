"""Matmul: product of two lower-triangular fp32 matrices.

The reference runs a dense GEMM and masks the result; the product of lower-triangular matrices
is lower-triangular and C[i, j] only sums k in [j, i], so a kernel that skips the zero blocks
does about a sixth of the arithmetic. fp32 in, fp32 math expected (no TF32).
"""
import torch
import torch.nn as nn

N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    A = torch.tril(torch.randn(N, N))
    B = torch.tril(torch.randn(N, N))
    return [A, B]


def get_init_inputs():
    return []
