"""A CPU candidate for the program program_scaled_add: ModelNew(alpha), forward(x, y) returns what
the program's ENTRY scaled_add(x, y, alpha) returns."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor scaled_add(torch::Tensor x, torch::Tensor y, double alpha) {
  TORCH_CHECK(x.sizes() == y.sizes() && x.scalar_type() == torch::kFloat32, "x, y: same-shape float32");
  x = x.contiguous();
  y = y.contiguous();
  torch::Tensor out = torch::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* yp = y.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const float a = static_cast<float>(alpha);
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) op[i] = xp[i] + a * yp[i];
  return out;
}
"""

_ext = load_inline(name="kp_program_scaled_add_cpu", cpp_sources=_CPP, functions=["scaled_add"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return _ext.scaled_add(x, y, self.alpha)
