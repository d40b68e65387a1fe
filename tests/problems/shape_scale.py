"""A row scale whose weight's size comes from a module-level constant (init inputs), for tests of
shape variants: derived ones change batch_size and dim, and Model is built from each variant's
init inputs. A fast problem for CPU tests."""
import torch
import torch.nn as nn

batch_size = 8
dim = 64


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return x * self.weight


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
