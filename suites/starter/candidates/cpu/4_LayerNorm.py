"""CPU candidate for 4_LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias per row, in C++.

Two passes per row while it is in cache (the mean, then the variance of the deviations, both
accumulated in double), then one pass that writes the normalised row; rows are split across
threads with at::parallel_for. Written by the kernelpro project for the starter suite; it is
meant to be correct and quick on a small machine, not to beat eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                 double eps) {
  TORCH_CHECK(x.device().is_cpu() && weight.device().is_cpu() && bias.device().is_cpu(),
              "inputs must be CPU tensors");
  TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(),
              "inputs must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
              bias.scalar_type() == torch::kFloat32, "inputs must be float32");
  TORCH_CHECK(x.dim() >= 1 && weight.dim() == 1 && bias.dim() == 1 &&
              weight.size(0) == x.size(-1) && bias.size(0) == x.size(-1),
              "weight and bias must match the last dimension of x");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t cols = x.size(-1);
  if (x.numel() == 0) return y;
  const int64_t rows = x.numel() / cols;
  const float* xp = x.data_ptr<float>();
  const float* w = weight.data_ptr<float>();
  const float* b = bias.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* __restrict__ xr = xp + r * cols;
      float* __restrict__ yr = yp + r * cols;
      double sum = 0.0;
      for (int64_t c = 0; c < cols; ++c) sum += xr[c];
      const double mean = sum / cols;
      double ss = 0.0;
      for (int64_t c = 0; c < cols; ++c) {
        const double d = xr[c] - mean;
        ss += d * d;
      }
      const float m = static_cast<float>(mean);
      const float rstd = static_cast<float>(1.0 / std::sqrt(ss / cols + eps));
      for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - m) * rstd * w[c] + b[c];
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_starter_layer_norm_cpu", cpp_sources=_CPP,
                   functions=["layer_norm_forward"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.hidden = hidden
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden))

    def forward(self, x):
        return _ext.layer_norm_forward(x.contiguous(), self.weight.contiguous(),
                                       self.bias.contiguous(), float(self.eps))
