"""CPU candidate for 2_TransformerMLPBlock: x + fc2(gelu(fc1(layer_norm(x)))) in one C++ call.

Per block of 4 tokens: the LayerNorm rows (mean and variance in double), then fc1 as dot products
of those 4 rows with each W1 row (4 x 8 float accumulators, so the k loop vectorises without
-ffast-math) plus bias and the exact erf GELU, then fc2 the same way over the 4 hidden rows, plus
bias and the residual. The hidden activations of a block (4 x 2048 floats) never leave the
cache. Blocks are split across threads with at::parallel_for. Written by the kernelpro project
for the starter suite; correct and quick on a small machine, not meant to beat eager's BLAS.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <cmath>
#include <vector>

namespace {

constexpr int64_t TB = 4;  // tokens per block

// out[r * ldo + n] = sum_k in[r * K + k] * w[n * K + k] + b[n], for r < rows (<= TB), n < N.
template <typename Epilogue>
void rows_times_wt(const float* in, int64_t rows, int64_t K, const float* w, const float* b,
                   int64_t N, float* out, int64_t ldo, Epilogue epi) {
  for (int64_t n = 0; n < N; ++n) {
    const float* __restrict__ wn = w + n * K;
    float acc[TB][8] = {};
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
      for (int64_t r = 0; r < rows; ++r) {
        const float* __restrict__ ir = in + r * K + k;
        for (int j = 0; j < 8; ++j) acc[r][j] += ir[j] * wn[k + j];
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      float s = 0.0f;
      for (int j = 0; j < 8; ++j) s += acc[r][j];
      for (int64_t kk = k; kk < K; ++kk) s += in[r * K + kk] * wn[kk];
      out[r * ldo + n] = epi(r, n, s + b[n]);
    }
  }
}

}  // namespace

torch::Tensor mlp_block_forward(torch::Tensor x, torch::Tensor ln_w, torch::Tensor ln_b,
                                double eps, torch::Tensor w1, torch::Tensor b1, torch::Tensor w2,
                                torch::Tensor b2) {
  for (const torch::Tensor& t : {x, ln_w, ln_b, w1, b1, w2, b2}) {
    TORCH_CHECK(t.device().is_cpu() && t.is_contiguous() && t.scalar_type() == torch::kFloat32,
                "inputs must be contiguous float32 CPU tensors");
  }
  TORCH_CHECK(x.dim() == 2, "x must be (tokens, width)");
  const int64_t T = x.size(0), D = x.size(1), H = w1.size(0);
  TORCH_CHECK(ln_w.numel() == D && ln_b.numel() == D && w1.dim() == 2 && w1.size(1) == D &&
              b1.numel() == H && w2.dim() == 2 && w2.size(0) == D && w2.size(1) == H &&
              b2.numel() == D, "parameter shapes do not match x");
  torch::Tensor y = torch::empty({T, D}, x.options());
  if (T == 0) return y;
  const float* xp = x.data_ptr<float>();
  const float* gw = ln_w.data_ptr<float>();
  const float* gb = ln_b.data_ptr<float>();
  const float* w1p = w1.data_ptr<float>();
  const float* b1p = b1.data_ptr<float>();
  const float* w2p = w2.data_ptr<float>();
  const float* b2p = b2.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t blocks = (T + TB - 1) / TB;
  at::parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> normed(TB * D), hidden(TB * H);
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t t0 = blk * TB, rows = std::min(TB, T - t0);
      const float* xb = xp + t0 * D;
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = xb + r * D;
        double sum = 0.0, ss = 0.0;
        for (int64_t c = 0; c < D; ++c) sum += xr[c];
        const double mean = sum / D;
        for (int64_t c = 0; c < D; ++c) ss += (xr[c] - mean) * (xr[c] - mean);
        const float m = static_cast<float>(mean);
        const float rstd = static_cast<float>(1.0 / std::sqrt(ss / D + eps));
        for (int64_t c = 0; c < D; ++c) normed[r * D + c] = (xr[c] - m) * rstd * gw[c] + gb[c];
      }
      rows_times_wt(normed.data(), rows, D, w1p, b1p, H, hidden.data(), H,
                    [](int64_t, int64_t, float v) {
                      return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
                    });
      rows_times_wt(hidden.data(), rows, H, w2p, b2p, D, yp + t0 * D, D,
                    [&](int64_t r, int64_t n, float v) { return xb[r * D + n] + v; });
    }
  });
  return y;
}
"""

_ext = load_inline(name="kp_starter_mlp_block_cpu", cpp_sources=_CPP,
                   functions=["mlp_block_forward"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x):
        return _ext.mlp_block_forward(
            x.contiguous(), self.norm.weight.contiguous(), self.norm.bias.contiguous(),
            float(self.norm.eps), self.fc1.weight.contiguous(), self.fc1.bias.contiguous(),
            self.fc2.weight.contiguous(), self.fc2.bias.contiguous())
