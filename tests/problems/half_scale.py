"""Elementwise: y = 2 * x in fp16, the reference of tests/fixtures/prompts/half_scale_bad_build.py.

A tiny problem for the debug-prompt tests; its candidate failed to build on an H200 and the
dump that build printed is tests/fixtures/prompts/torch_build_error.txt.
"""
import torch
import torch.nn as nn

N = 1 << 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.randn(N).half()]


def get_init_inputs():
    return []
