"""CPU test candidate for tril_matmul: C = tril(A @ B) for lower-triangular A and B.

Only the nonzero terms are summed: C[i, j] = sum over k in [j, i] of A[i, k] * B[k, j] (j <= i), about
a sixth of a dense GEMM. Loops are blocked (64 rows x 256 columns of C) so the C block stays in
cache while rows of B stream through it; the innermost loop runs over contiguous columns and
vectorises. fp32 accumulation, upper triangle written as zeros. Row blocks are dealt round-robin
to at::parallel_for tasks to balance the triangular work.

Used by the CPU test suite to check the harness end to end; it is not meant to beat eager.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>

torch::Tensor tril_matmul_forward(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.device().is_cpu() && B.device().is_cpu(), "inputs must be CPU tensors");
  TORCH_CHECK(A.is_contiguous() && B.is_contiguous(), "inputs must be contiguous");
  TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
              "inputs must be float32");
  TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(0) == A.size(1) && B.sizes() == A.sizes(),
              "A and B must be square matrices of the same size");
  const int64_t n = A.size(0);
  torch::Tensor C = torch::zeros({n, n}, A.options());
  if (n == 0) return C;
  const float* a = A.data_ptr<float>();
  const float* b = B.data_ptr<float>();
  float* c = C.data_ptr<float>();
  const int64_t IB = 64, JB = 256;
  const int64_t nblk = (n + IB - 1) / IB;
  const int64_t ntask = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), nblk));
  at::parallel_for(0, ntask, 1, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      for (int64_t ib = t; ib < nblk; ib += ntask) {
        const int64_t i0 = ib * IB, i1 = std::min(n, i0 + IB);
        for (int64_t j0 = 0; j0 < i1; j0 += JB) {        // only columns j <= i
          const int64_t j1 = std::min(j0 + JB, i1);
          for (int64_t k = j0; k < i1; ++k) {             // j0 <= j <= k <= i < i1
            const float* __restrict__ bk = b + k * n;
            const int64_t jend = std::min(k + 1, j1);
            for (int64_t i = std::max(i0, k); i < i1; ++i) {
              const float aik = a[i * n + k];
              float* __restrict__ ci = c + i * n;
              for (int64_t j = j0; j < jend; ++j) ci[j] += aik * bk[j];
            }
          }
        }
      }
    }
  });
  return C;
}
"""

_ext = load_inline(name="kp_tril_matmul_cpu", cpp_sources=_CPP, functions=["tril_matmul_forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.tril_matmul_forward(A.contiguous(), B.contiguous())
