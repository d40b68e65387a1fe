"""Good CPU candidate for tests/problems/vacuous.py: y = x * 1e-4 in C++.

Correct. A harness that flags the problem itself as vacuous (all-zero output would pass
allclose) may report that instead of a candidate verdict; otherwise: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor scale(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat, "float32 CPU tensor expected");
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t n = x.numel();
  const float s = 1e-4;  // same rounding of the constant as the reference's python scalar
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * s;
  return y;
}
"""

_ext = load_inline(name="kp_good_cpu_vacuous", cpp_sources=_CPP, functions=["scale"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.scale(x)
