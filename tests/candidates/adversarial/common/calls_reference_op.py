"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): calls the reference's own ops.

forward passes x through a do-nothing C++ extension (to look like a custom kernel) and then
returns x * torch.sigmoid(x), exactly the reference's computation. The result is correct, but
the "kernel" is PyTorch's.
A correct harness must flag it with its static policy and report: incorrect ("calls
torch.sigmoid, which the reference uses").
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor prepare(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 expected");
  return x;
}
"""

_ext = load_inline(name="kp_adv_calls_reference_op", cpp_sources=_CPP, functions=["prepare"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = _ext.prepare(x)
        return x * torch.sigmoid(x)
