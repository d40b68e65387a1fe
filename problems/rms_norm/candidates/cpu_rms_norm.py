"""CPU test candidate for rms_norm: y = x * rsqrt(mean(x^2) + eps) * weight, one C++ pass per row
(double sum of squares, at::parallel_for over rows).

Used by the CPU test suite to check the harness end to end; it is not meant to beat eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor rms_norm_forward(torch::Tensor x, torch::Tensor weight, double eps) {
  TORCH_CHECK(x.device().is_cpu() && weight.device().is_cpu(), "inputs must be CPU tensors");
  TORCH_CHECK(x.is_contiguous() && weight.is_contiguous(), "inputs must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
              "inputs must be float32");
  TORCH_CHECK(x.dim() >= 1 && weight.dim() == 1 && weight.size(0) == x.size(-1),
              "weight must match the last dimension of x");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t hidden = x.size(-1);
  if (x.numel() == 0) return y;
  const int64_t rows = x.numel() / hidden;
  const float* xp = x.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = xp + r * hidden;
      float* yr = yp + r * hidden;
      double ss = 0.0;
      for (int64_t c = 0; c < hidden; ++c) ss += static_cast<double>(xr[c]) * xr[c];
      const float rs = static_cast<float>(1.0 / std::sqrt(ss / hidden + eps));
      for (int64_t c = 0; c < hidden; ++c) yr[c] = xr[c] * rs * wp[c];
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_rms_norm_cpu", cpp_sources=_CPP, functions=["rms_norm_forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x):
        return _ext.rms_norm_forward(x.contiguous(), self.weight.contiguous(), float(self.eps))
