"""Adversarial (CPU, target tests/problems/small_matmul.py): rounds fp32 inputs before the matmul.

Each input element is rounded (round-to-nearest-even) to 12 explicit mantissa bits instead of
23, then multiplied with fp32 accumulation. TF32's 10 bits would be too coarse: it fails the
plain allclose(atol=1e-2, rtol=1e-3) on 256x256 randn (max error ~0.024). With 12 bits the
plain allclose passes (200/200 seeds, max error ~0.006), but the normwise error against an
fp64 reference is ~7e-5, vs ~3e-7 for a true fp32 kernel (~250x worse).
A correct harness must report: incorrect, or lowered precision.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cstdint>
#include <cstring>
#include <vector>

static const int kKeepBits = 12;  // explicit mantissa bits kept (fp32 has 23, TF32 10, bf16 7)

static float round_mantissa(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const int drop = 23 - kKeepBits;
  const uint32_t lsb = (u >> drop) & 1u;
  u += (1u << (drop - 1)) - 1u + lsb;  // round to nearest, ties to even
  u &= ~((1u << drop) - 1u);
  std::memcpy(&f, &u, sizeof f);
  return f;
}

torch::Tensor matmul(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.device().is_cpu() && B.device().is_cpu(), "CPU tensors expected");
  TORCH_CHECK(A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat, "float32 expected");
  TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "bad shapes");
  A = A.contiguous();
  B = B.contiguous();
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  std::vector<float> a(A.data_ptr<float>(), A.data_ptr<float>() + M * K);
  std::vector<float> b(B.data_ptr<float>(), B.data_ptr<float>() + K * N);
  for (auto& v : a) v = round_mantissa(v);
  for (auto& v : b) v = round_mantissa(v);
  auto C = torch::zeros({M, N}, A.options());
  float* c = C.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const float aik = a[i * K + k];
      for (int64_t j = 0; j < N; ++j) c[i * N + j] += aik * b[k * N + j];
    }
  return C;
}
"""

_ext = load_inline(name="kp_adv_cpu_low_precision", cpp_sources=_CPP, functions=["matmul"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.matmul(A, B)
