"""CPU candidate for 5_RowMean: the mean of each row, in C++.

Each row is summed with eight independent float accumulators (so the loop vectorises without
-ffast-math and the rounding error stays that of eight short sums), combined in double and
divided by the row length; rows are split across threads with at::parallel_for. Written by the
kernelpro project for the starter suite; correct and quick on a small machine, not meant to beat
eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor row_mean_forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.is_contiguous() && x.scalar_type() == torch::kFloat32 &&
              x.dim() >= 1, "x must be a contiguous float32 CPU tensor");
  const int64_t cols = x.size(-1);
  std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end() - 1);
  torch::Tensor y = torch::empty(out_sizes, x.options());
  if (y.numel() == 0) return y;
  const int64_t rows = y.numel();
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* __restrict__ xr = xp + r * cols;
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t c = 0;
      for (; c + 8 <= cols; c += 8) {
        for (int j = 0; j < 8; ++j) acc[j] += xr[c + j];
      }
      double s = 0.0;
      for (int j = 0; j < 8; ++j) s += acc[j];
      for (; c < cols; ++c) s += xr[c];
      yp[r] = cols > 0 ? static_cast<float>(s / cols) : NAN;
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_starter_row_mean_cpu", cpp_sources=_CPP, functions=["row_mean_forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.row_mean_forward(x.contiguous())
