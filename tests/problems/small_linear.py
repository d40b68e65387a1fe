"""A fully connected layer, nn.Linear(256, 128) on a batch of 64: a fast CPU problem for the
torch-operator policy.

The reference runs aten.addmm (after nn.Linear's decomposition). A candidate that computes the
same product with any torch spelling (F.linear, `@`, Tensor.matmul, an nn.Linear, a helper
function, at::addmm from C++) calls the reference's operator.
"""
import torch
import torch.nn as nn

IN_FEATURES, OUT_FEATURES, BATCH = 256, 128, 64


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
