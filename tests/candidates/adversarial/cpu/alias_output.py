"""Adversarial (CPU, target tests/problems/tiny_swish.py): computes in place and returns x.

The C++ code overwrites x with swish(x) and returns x itself, saving the allocation. The
values are correct, but the output is the input tensor (same storage) and the input is gone.
A correct harness must report: incorrect ("output aliases an input"; it also modified its input).
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
  float* p = x.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = p[i] / (1.0f + std::exp(-p[i]));
  return x;
}
"""

_ext = load_inline(name="kp_adv_cpu_alias_output", cpp_sources=_CPP, functions=["swish"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
