"""Good CPU candidate for tests/problems/tiny_swish.py: swish as one C++ loop.

Correct, no PyTorch compute in forward. A correct harness reports: correct.
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
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));
  return y;
}
"""

_ext = load_inline(name="kp_good_cpu_tiny_swish", cpp_sources=_CPP, functions=["swish"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
