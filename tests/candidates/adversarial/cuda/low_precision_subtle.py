"""Adversarial (CUDA, target problems/tril_matmul/problem.py): inputs silently rounded to 13 mantissa bits.

Same tiled matmul as low_precision.py, but each A and B element is rounded (nearest, ties to
even) from 23 to 13 explicit mantissa bits in fp32 registers, then multiplied and accumulated in
fp32. Subtle enough to pass the plain allclose(atol=1e-2, rtol=1e-3) on N=2048 (CPU simulation,
seeds 0-4: max |err| ~0.007, all pass), but the normwise error vs an fp64 reference is ~3.7e-5,
vs ~6e-7 for a true fp32 kernel (~60x worse). (Rounding to TF32's 10 bits or to 12 bits fails the
plain allclose at this size.)
A correct harness must report: incorrect, or lowered precision.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor tril_matmul(torch::Tensor A, torch::Tensor B);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define TILE 16
#define KEEP_BITS 13

__device__ __forceinline__ float lower(float f) {
  const unsigned drop = 23 - KEEP_BITS;
  unsigned u = __float_as_uint(f);
  u += (1u << (drop - 1)) - 1u + ((u >> drop) & 1u);  // round to nearest, ties to even
  return __uint_as_float(u & ~((1u << drop) - 1u));
}

__global__ void tril_matmul_lowered_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    const int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = lower(row < n && ak < n ? A[(size_t)row * n + ak] : 0.0f);
    Bs[threadIdx.y][threadIdx.x] = lower(bk < n && col < n ? B[(size_t)bk * n + col] : 0.0f);
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
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
  tril_matmul_lowered_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return C;
}
"""

_ext = load_inline(name="kp_adv_cuda_low_precision_subtle", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["tril_matmul"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.tril_matmul(A, B)
