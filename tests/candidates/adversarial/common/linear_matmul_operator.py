"""Adversarial (common; target tests/problems/small_linear.py): the reference's nn.Linear, spelled
with the `@` operator.

forward is x @ self.fc.weight.t() + self.fc.bias: torch's matrix product (aten.mm) where the
reference's nn.Linear runs aten.addmm; the same computation by another operator of the same
family.
A correct harness reports: incorrect ("forward calls aten.mm, which does the reference's gemm").
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return x @ self.fc.weight.t() + self.fc.bias
