"""Adversarial (common; target tests/problems/small_linear.py): the reference's nn.Linear, spelled
torch.nn.functional.linear.

forward is F.linear(x, self.fc.weight, self.fc.bias): PyTorch's own GEMM, under a name the
static scan does not equate with the reference's nn.Linear.
A correct harness reports: incorrect, naming the operator that ran ("forward calls aten.addmm,
an operator the reference uses").
"""
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.linear(x, self.fc.weight, self.fc.bias)
