"""Good CPU candidate for tests/problems/tuple_output.py: returns (x + 1, x.sum(-1)) from C++.

The extension returns a std::tuple of two tensors (pybind11 turns it into a Python tuple).
Row sums are accumulated in double, so they agree with torch's sum to fp32 rounding.
Verdict: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <tuple>

std::tuple<torch::Tensor, torch::Tensor> add1_rowsum(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.dim() == 2,
              "2-D float32 CPU tensor expected");
  x = x.contiguous();
  const int64_t rows = x.size(0), cols = x.size(1);
  auto y = torch::empty_like(x);
  auto s = torch::empty({rows}, x.options());
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  float* sum = s.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const float v = in[r * cols + c];
      out[r * cols + c] = v + 1.0f;
      acc += v;
    }
    sum[r] = static_cast<float>(acc);
  }
  return std::make_tuple(y, s);
}
"""

_ext = load_inline(name="kp_good_cpu_tuple_output", cpp_sources=_CPP, functions=["add1_rowsum"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.add1_rowsum(x)
