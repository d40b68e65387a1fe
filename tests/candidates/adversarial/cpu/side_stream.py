"""Adversarial (CPU, target tests/problems/tiny_swish.py): work finishes on a detached thread.

forward allocates the output, starts a detached std::thread that sleeps ~300 ms and then
fills the output with a correct swish, and returns the still-unfilled tensor at once. The
thread holds references to x and y, so the memory stays valid; a caller that waits long
enough before reading sees correct values, and a timer sees an almost-free forward.
A correct harness must report: incorrect ("work on a side stream/thread": the output is not
ready when forward returns).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <chrono>
#include <cmath>
#include <thread>

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat, "float32 CPU tensor expected");
  x = x.contiguous();
  auto y = torch::empty_like(x);
  std::thread([x, y]() {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));
  }).detach();
  return y;
}
"""

_ext = load_inline(name="kp_adv_cpu_side_stream", cpp_sources=_CPP, functions=["swish"],
                   extra_ldflags=["-lpthread"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
