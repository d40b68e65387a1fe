"""Fault (CPU, target tests/problems/tiny_swish.py): null-pointer write in the C++ forward.

The pointer is `volatile float* volatile`, so the compiler can neither fold it to a known null
(and turn the store into a trap, SIGILL) nor drop the store as dead (GCC -O3 did drop a store
through a pointer made from a volatile uintptr_t); the process dies with SIGSEGV.
A correct harness must report: runtime_error (worker killed by SIGSEGV), and keep going.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor swish(torch::Tensor x) {
  volatile float* volatile p = nullptr;  // volatile pointer to volatile: neither the load nor
  *p = 1.0f;                             // the store may be folded or dropped -> SIGSEGV
  return x;
}
"""

_ext = load_inline(name="kp_fault_cpu_segfault", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
