"""PyTorch reference for problem.cu (the naive CUDA row softmax): the outputs candidates must
match. Same input as the program."""
import torch
import torch.nn as nn

ROWS = 8192
COLS = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
