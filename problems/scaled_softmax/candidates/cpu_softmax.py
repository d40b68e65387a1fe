"""CPU test candidate for scaled_softmax: softmax(x / T) over the last dim, one C++ pass per row
(fp32 exponentials, double row sum, at::parallel_for over rows).

Used by the CPU test suite to check the harness end to end; it is not meant to beat eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <limits>

torch::Tensor scaled_softmax_forward(torch::Tensor x, double temperature) {
  TORCH_CHECK(x.device().is_cpu(), "x must be a CPU tensor");
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t cols = x.size(-1);
  if (x.numel() == 0) return y;
  const int64_t rows = x.numel() / cols;
  const float t = static_cast<float>(temperature);
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = xp + r * cols;
      float* yr = yp + r * cols;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < cols; ++c) {
        const float s = xr[c] / t;
        yr[c] = s;
        m = s > m ? s : m;
      }
      double sum = 0.0;
      for (int64_t c = 0; c < cols; ++c) {
        const float e = std::exp(yr[c] - m);
        yr[c] = e;
        sum += e;
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_scaled_softmax_cpu", cpp_sources=_CPP,
                   functions=["scaled_softmax_forward"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, temperature: float):
        super().__init__()
        self.temperature = temperature

    def forward(self, x):
        return _ext.scaled_softmax_forward(x.contiguous(), float(self.temperature))
