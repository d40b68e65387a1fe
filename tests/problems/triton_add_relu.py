"""Triton reference: out = relu(x + y) * scale, one program per block of 1024 elements.

A tiny Triton-kind problem for the prompt tests: the kind is detected from the triton import.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 1 << 16


@triton.jit
def _add_relu_kernel(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x + y, 0.0) * scale, mask=mask)


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x, y):
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _add_relu_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, self.scale, BLOCK=1024)
        return out


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return [0.5]
