"""Fault (CPU, target tests/problems/tiny_swish.py): C++ with a type error.

`float* out = y;` assigns an at::Tensor to a float*; g++ fails with "cannot convert
'at::Tensor' to 'float*' in initialization", and load_inline raises at import.
A correct harness must report: compile_error, quoting the compiler's message.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* out = y;  // type error
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));
  return y;
}
"""

_ext = load_inline(name="kp_fault_cpu_compile_error", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
