"""A small model: a pre-norm transformer MLP block, y = x + W2 gelu(W1 LayerNorm(x) + b1) + b2.

1024 tokens of width 512, hidden width 2048 (4x): two 2.1 GFLOP fp32 GEMMs (no TF32) around a
LayerNorm, the exact (erf) GELU and the residual add. Eager runs five kernels (layer_norm, addmm,
gelu, addmm, add), writing the 8 MiB hidden activations twice and the output twice; a fused
version needs three (the norm, then each GEMM with its epilogue in registers).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 1024
WIDTH = 512
HIDDEN = 2048


class Model(nn.Module):
    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def get_inputs():
    return [torch.randn(TOKENS, WIDTH)]


def get_init_inputs():
    return [WIDTH, HIDDEN]
