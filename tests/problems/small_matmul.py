"""Matmul: fp32 torch.matmul(A, B), A and B randn(256, 256). A fast problem for CPU tests.

fp32 in, fp32 math expected (no reduced-precision inputs such as TF32/bf16).
"""
import torch
import torch.nn as nn

N = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
