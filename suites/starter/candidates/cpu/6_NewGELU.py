"""CPU candidate for 6_NewGELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) in one loop.

One pass over the tensor instead of eager's seven, split across threads with at::parallel_for.
Written by the kernelpro project for the starter suite; correct and quick on a small machine, not
meant to beat eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor new_gelu_forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CPU tensor");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  at::parallel_for(0, x.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = xp[i];
      yp[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_starter_new_gelu_cpu", cpp_sources=_CPP, functions=["new_gelu_forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.new_gelu_forward(x.contiguous())
