"""Good CPU candidate for tests/problems/small_matmul.py: fp32 matmul as an i-k-j C++ loop.

Full fp32 inputs and fp32 accumulation; relative error vs an fp64 reference ~3e-7, same as
torch's. Verdict: correct (and not lowered precision).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor matmul(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.device().is_cpu() && B.device().is_cpu(), "CPU tensors expected");
  TORCH_CHECK(A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat, "float32 expected");
  TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "bad shapes");
  A = A.contiguous();
  B = B.contiguous();
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  auto C = torch::zeros({M, N}, A.options());
  const float* a = A.data_ptr<float>();
  const float* b = B.data_ptr<float>();
  float* c = C.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const float aik = a[i * K + k];
      for (int64_t j = 0; j < N; ++j) c[i * N + j] += aik * b[k * N + j];
    }
  return C;
}
"""

_ext = load_inline(name="kp_good_cpu_small_matmul", cpp_sources=_CPP, functions=["matmul"],
                   extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.matmul(A, B)
