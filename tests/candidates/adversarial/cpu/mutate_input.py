"""Adversarial (CPU, target tests/problems/tiny_swish.py): writes to its input.

The C++ loop computes a correct swish into a fresh output, and also halves each input
element in place after reading it. The returned output is correct; the caller's x is not.
A correct harness must report: incorrect ("modified its input").
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous(),
              "contiguous float32 CPU tensor expected");
  auto y = torch::empty_like(x);
  float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float v = in[i];
    out[i] = v / (1.0f + std::exp(-v));
    in[i] = v * 0.5f;  // the fault: scribbles on the input
  }
  return y;
}
"""

_ext = load_inline(name="kp_adv_cpu_mutate_input", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
