"""Adversarial (cpu; target tests/problems/small_linear.py): a "custom kernel" that is
PyTorch's.

A load_inline C++ extension whose entry point calls at::addmm: the source looks like a kernel of
its own, and no torch call is visible in Python, but the operator the dispatcher runs is the
reference's.
A correct harness reports: incorrect ("forward calls aten.addmm").
"""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor fused_linear(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2, "2-D tensors expected");
  return at::addmm(b, x, w.t());
}
"""

_ext = load_inline(name="kp_adv_linear_cpp_aten", cpp_sources=_CPP, functions=["fused_linear"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return _ext.fused_linear(x, self.fc.weight, self.fc.bias)
