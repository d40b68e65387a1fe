"""A small model: an 8-layer, 256-wide MLP at batch 64, as in small-batch inference.

Each layer is a tiny GEMM plus a ReLU, so eager time is dominated by 16 kernel launches and
their CPU overhead; one kernel that runs all layers with activations kept on chip removes them.
"""
import torch
import torch.nn as nn

BATCH = 64
WIDTH = 256
LAYERS = 8


class Model(nn.Module):
    def __init__(self, width: int, layers: int):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(layers)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def get_inputs():
    return [torch.randn(BATCH, WIDTH)]


def get_init_inputs():
    return [WIDTH, LAYERS]
