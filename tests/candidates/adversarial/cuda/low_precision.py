"""Adversarial (CUDA, target problems/tril_matmul/problem.py): fp16 inputs behind an fp32 API.

A tiled matmul that converts every A and B element to __half (__float2half_rn) as it loads
the tile into shared memory, multiplies the half values and accumulates in fp32, then masks to
the lower triangle. The problem asks for fp32 math. On N=2048 the error is large enough to fail
the plain allclose(atol=1e-2, rtol=1e-3) too (max |err| ~0.065 in a CPU simulation; normwise
error vs fp64 ~3e-4, vs ~6e-7 for fp32). See low_precision_subtle.py for a variant that passes
the plain allclose.
A correct harness must report: incorrect (or lowered precision).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>

#define TILE 16

__global__ void tril_matmul_half_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int n) {
  __shared__ __half As[TILE][TILE];
  __shared__ __half Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    const int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = __float2half_rn(row < n && ak < n ? A[(size_t)row * n + ak] : 0.0f);
    Bs[threadIdx.y][threadIdx.x] = __float2half_rn(bk < n && col < n ? B[(size_t)bk * n + col] : 0.0f);
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      acc += __half2float(As[threadIdx.y][k]) * __half2float(Bs[k][threadIdx.x]);
    __syncthreads();
  }
  if (row < n && col < n) C[(size_t)row * n + col] = col <= row ? acc : 0.0f;
}

torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.is_cuda() && B.is_cuda(), "CUDA tensors expected");
  TORCH_CHECK(A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat, "float32 expected");
  TORCH_CHECK(A.dim() == 2 && A.size(0) == A.size(1) && B.sizes() == A.sizes(), "square, same shape");
  A = A.contiguous();
  B = B.contiguous();
  const int n = (int)A.size(0);
  auto C = torch::empty_like(A);
  if (n == 0) return C;
  const dim3 threads(TILE, TILE), blocks((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
  tril_matmul_half_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return C;
}
"""

_ext = load_inline(name="kp_adv_cuda_low_precision", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["tril_matmul"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.tril_matmul(A, B)
