"""Fault (CPU, target tests/problems/tiny_swish.py): the C++ forward never returns.

It spins on a volatile flag that nothing sets, holding the GIL (pybind11 does not release it),
so Python-level signal handlers and watchdog threads in the same process never run.
A correct harness must report: timeout (kill the worker from outside), and keep going.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor swish(torch::Tensor x) {
  volatile bool done = false;
  while (!done) {
  }
  return x;
}
"""

_ext = load_inline(name="kp_fault_cpu_endless_loop", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
