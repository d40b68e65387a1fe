"""Adversarial (common; target tests/problems/small_linear.py): calls an nn.Linear submodule.

forward is self.fc(x), exactly the reference's computation. The static scan sees it
("calls nn.Linear"); with --no-static-checks the operator trace does ("aten.addmm").
A correct harness reports: incorrect.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.fc(x)
