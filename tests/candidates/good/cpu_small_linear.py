"""Good CPU candidate for tests/problems/small_linear.py: y = x W^T + b as a C++ loop.

It keeps nn.Linear's parameters (so it gets the reference's weights) but never calls it: the
product is its own loop, in fp32 with fp32 accumulation. Only allocation reaches PyTorch.
A correct harness reports: correct (no finding of the torch-operator policy).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor linear(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "shapes");
  x = x.contiguous();
  w = w.contiguous();
  b = b.contiguous();
  const int64_t n = x.size(0), k = x.size(1), m = w.size(0);
  auto y = torch::empty({n, m}, x.options());
  const float* xp = x.data_ptr<float>();
  const float* wp = w.data_ptr<float>();
  const float* bp = b.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      float acc = 0.0f;
      for (int64_t l = 0; l < k; ++l) acc += xp[i * k + l] * wp[j * k + l];
      yp[i * m + j] = acc + bp[j];
    }
  }
  return y;
}
"""

_ext = load_inline(name="kp_good_cpu_small_linear", cpp_sources=_CPP, functions=["linear"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)  # parameters only: the reference's weights

    def forward(self, x):
        return _ext.linear(x, self.fc.weight, self.fc.bias)
