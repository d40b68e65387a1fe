"""CPU test candidate for swish: y = x * sigmoid(x) as one C++ loop (fp32, at::parallel_for).

Used by the CPU test suite to check the harness end to end; it is not meant to beat eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor swish_forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu(), "x must be a CPU tensor");
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, x.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = xp[i];
      yp[i] = v / (1.0f + std::exp(-v));
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_swish_cpu", cpp_sources=_CPP, functions=["swish_forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish_forward(x.contiguous())
