"""Fault (CUDA, target problems/swish/problem.py): std::abort() in the host wrapper.

A correct harness must report: runtime_error (worker killed by SIGABRT), and keep going.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swish(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <cstdlib>

torch::Tensor swish(torch::Tensor x) {
  std::abort();
  return x;
}
"""

_ext = load_inline(name="kp_fault_cuda_abort", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
