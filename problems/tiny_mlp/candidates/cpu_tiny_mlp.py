"""CPU test candidate for tiny_mlp: all Linear+ReLU layers in one C++ call, one batch row at a
time (double accumulation of each dot product, at::parallel_for over rows).

Used by the CPU test suite to check the harness end to end; it is not meant to beat eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <vector>

torch::Tensor tiny_mlp_forward(torch::Tensor x, std::vector<torch::Tensor> weights,
                               std::vector<torch::Tensor> biases) {
  TORCH_CHECK(x.device().is_cpu() && x.is_contiguous() && x.scalar_type() == torch::kFloat32 &&
              x.dim() == 2, "x must be a contiguous 2-D float32 CPU tensor");
  TORCH_CHECK(!weights.empty() && weights.size() == biases.size(), "need one bias per weight");
  int64_t width = x.size(1), widest = width;
  for (size_t l = 0; l < weights.size(); ++l) {
    const torch::Tensor& w = weights[l];
    const torch::Tensor& b = biases[l];
    TORCH_CHECK(w.device().is_cpu() && b.device().is_cpu() && w.is_contiguous() &&
                b.is_contiguous() && w.scalar_type() == torch::kFloat32 &&
                b.scalar_type() == torch::kFloat32, "parameters must be contiguous float32 CPU");
    TORCH_CHECK(w.dim() == 2 && w.size(1) == width && b.dim() == 1 && b.size(0) == w.size(0),
                "layer shape mismatch");
    width = w.size(0);
    widest = std::max(widest, width);
  }
  const int64_t batch = x.size(0), in0 = x.size(1);
  torch::Tensor y = torch::empty({batch, width}, x.options());
  if (batch == 0) return y;
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> cur(widest), nxt(widest);
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t k = 0; k < in0; ++k) cur[k] = xp[r * in0 + k];
      for (size_t l = 0; l < weights.size(); ++l) {
        const int64_t in = weights[l].size(1), out = weights[l].size(0);
        const float* w = weights[l].data_ptr<float>();
        const float* b = biases[l].data_ptr<float>();
        for (int64_t n = 0; n < out; ++n) {
          double s = 0.0;
          for (int64_t k = 0; k < in; ++k) s += static_cast<double>(w[n * in + k]) * cur[k];
          const float v = static_cast<float>(s + b[n]);
          nxt[n] = v < 0.0f ? 0.0f : v;
        }
        cur.swap(nxt);
      }
      for (int64_t n = 0; n < width; ++n) yp[r * width + n] = cur[n];
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_tiny_mlp_cpu", cpp_sources=_CPP, functions=["tiny_mlp_forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, width: int, layers: int):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(layers)])

    def forward(self, x):
        return _ext.tiny_mlp_forward(x.contiguous(),
                                     [layer.weight.contiguous() for layer in self.layers],
                                     [layer.bias.contiguous() for layer in self.layers])
