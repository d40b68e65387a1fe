"""PyTorch reference for problem.py (the Triton layer norm): the outputs candidates must match.

Same inputs as the program (x, weight, bias) and the same init input (eps).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 8192
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight, bias):
        return F.layer_norm(x, (x.shape[-1],), weight, bias, self.eps)


def get_inputs():
    x = torch.randn(ROWS, HIDDEN)
    weight = 1.0 + 0.1 * torch.randn(HIDDEN)
    bias = 0.1 * torch.randn(HIDDEN)
    return [x, weight, bias]


def get_init_inputs():
    return [1e-5]
