"""One loop through a sigmoid helper that is never declared (does not compile).

Demo candidate for problems/swish on the CPU (kernelpro optimize --demo --device cpu), written by
the kernelpro project.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor swish_forward(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CPU tensor");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const float* __restrict__ in = x.data_ptr<float>();
  float* __restrict__ out = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * sigmoid_fast(in[i]);
  return y;
}
"""

_ext = load_inline(name="kp_demo_cpu_swish_undeclared", cpp_sources=_CPP, functions=["swish_forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish_forward(x.contiguous())
