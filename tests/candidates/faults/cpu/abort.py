"""Fault (CPU, target tests/problems/tiny_swish.py): std::abort() in the C++ forward.

A correct harness must report: runtime_error (worker killed by SIGABRT), and keep going.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cstdlib>

torch::Tensor swish(torch::Tensor x) {
  std::abort();
  return x;
}
"""

_ext = load_inline(name="kp_fault_cpu_abort", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
