"""Fault (cpu; tiny_swish): returns memory it never wrote.

The C++ entry point allocates its output with torch::empty_like and returns it without writing
a single element: whatever the allocator hands back (stale data, zeros, or NaN and infinities
from whatever the block held; on CUDA the harness fills freed blocks of the output's size with
NaN first).
A correct harness reports: incorrect, with a verdict on the values (elements outside the
tolerance, or "output 0 has ... NaN values"), never a failure of its own such as "worker exit 0
during compare" (NaN in the worker's JSON result).
"""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 expected");
  return torch::empty_like(x);  // never written
}
"""

_ext = load_inline(name="kp_fault_cpu_never_written", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
