"""Fault (common; tiny_swish on CPU, problems/swish on CUDA): forward raises RuntimeError("boom").

A correct harness must report: runtime_error, with "boom" in the message.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("boom")
