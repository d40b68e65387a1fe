"""Fault (common; any swish problem): the class is named Model_New, not ModelNew.

Imports fine, but there is no ModelNew to instantiate.
A correct harness must report: compile_error ("no ModelNew").
"""
import torch
import torch.nn as nn


class Model_New(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.clone()
