"""Fault (CPU, target tests/problems/tiny_swish.py): returns float64 instead of float32.

The C++ loop computes a correct swish in double and returns a kDouble tensor of the right shape.
Values would pass allclose after a cast.
A correct harness must report: incorrect ("dtype": expected float32, got float64).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat, "float32 CPU tensor expected");
  x = x.contiguous();
  auto y = torch::empty(x.sizes(), x.options().dtype(torch::kDouble));
  const float* in = x.data_ptr<float>();
  double* out = y.data_ptr<double>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] / (1.0 + std::exp(-(double)in[i]));
  return y;
}
"""

_ext = load_inline(name="kp_fault_cpu_wrong_dtype", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
