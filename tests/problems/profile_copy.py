"""Profiling target (GPU only): a copy of 2^22 float4 values.

Exists so `kernelpro profile` can record a kernel that stages through shared memory with
cp.async (tests/candidates/profile/cp_async_copy.py).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.clone()


def get_inputs():
    return [torch.randn(4 << 22)]


def get_init_inputs():
    return []
