"""Adversarial (common; target tests/problems/small_linear.py): the reference's nn.Linear, spelled
as tensor methods.

forward is x.matmul(self.fc.weight.t()).add(self.fc.bias): aten.mm and aten.add, reached
through methods of the input tensor.
A correct harness reports: incorrect ("forward calls aten.mm").
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return x.matmul(self.fc.weight.t()).add(self.fc.bias)
