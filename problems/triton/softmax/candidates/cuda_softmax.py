"""CUDA candidate for the three-kernel Triton softmax: softmax(x, dim=-1) in one kernel.

The Triton baseline reads the 128 MiB input three times (row max, row sum, normalise) and writes
it once: 4 x 128 MiB. Here one 256-thread block owns one row: the row is read once with float4
loads into registers (up to 8192 columns), the row max and the sum of exp(x - max) are reduced
with warp shuffles plus a 32-float shared buffer, and the normalised row is written once:
2 x 128 MiB, about 2x less time. Rows that do not fit the register path (more than 8192 columns,
columns not a multiple of 4, misaligned rows) use a three-pass fallback kernel.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor softmax_forward(torch::Tensor x);"

# Plain CUDA (no torch headers): compiles standalone with nvcc -arch=sm_90 -c.
_KERNELS = r"""
#include <cstdint>
#include <math_constants.h>

constexpr int SOFTMAX_THREADS = 256;

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Block-wide max or sum; every thread gets the result. blockDim.x is a multiple of 32.
// The leading barrier lets the same `red` buffer be reused by consecutive calls.
template <bool IS_MAX>
__device__ __forceinline__ float block_reduce(float v, float* red) {
  v = IS_MAX ? warp_max(v) : warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  const float identity = IS_MAX ? -CUDART_INF_F : 0.0f;
  v = lane < (int)(blockDim.x >> 5) ? red[lane] : identity;
  return IS_MAX ? warp_max(v) : warp_sum(v);
}

__device__ __forceinline__ float max4(float4 v) { return fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)); }

// One block per row, the row held in registers: thread t owns float4 columns t + i * 256, i < V.
// Requires cols % 4 == 0, 16-byte aligned rows and cols <= 1024 * V.
template <int V>
__global__ void __launch_bounds__(SOFTMAX_THREADS) softmax_rows_reg_kernel(
    const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float red[32];
  const int64_t row = blockIdx.x;
  const float4* __restrict__ xr = reinterpret_cast<const float4*>(x + row * cols);
  float4* __restrict__ yr = reinterpret_cast<float4*>(y + row * cols);
  const int c4 = cols >> 2;
  float4 v[V];
  float m = -CUDART_INF_F;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int c = threadIdx.x + i * SOFTMAX_THREADS;
    if (c < c4) {
      v[i] = __ldg(xr + c);
      m = fmaxf(m, max4(v[i]));
    }
  }
  m = block_reduce<true>(m, red);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int c = threadIdx.x + i * SOFTMAX_THREADS;
    if (c < c4) {
      v[i].x = expf(v[i].x - m);
      v[i].y = expf(v[i].y - m);
      v[i].z = expf(v[i].z - m);
      v[i].w = expf(v[i].w - m);
      s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  }
  s = block_reduce<false>(s, red);
  const float r = 1.0f / s;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int c = threadIdx.x + i * SOFTMAX_THREADS;
    if (c < c4) yr[c] = make_float4(v[i].x * r, v[i].y * r, v[i].z * r, v[i].w * r);
  }
}

// Fallback for any row length and alignment: three passes over the row (L2-resident for
// moderate rows).
__global__ void __launch_bounds__(SOFTMAX_THREADS) softmax_rows_generic_kernel(
    const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  __shared__ float red[32];
  const float* __restrict__ xr = x + (int64_t)blockIdx.x * cols;
  float* __restrict__ yr = y + (int64_t)blockIdx.x * cols;
  float m = -CUDART_INF_F;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  m = block_reduce<true>(m, red);
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
  s = block_reduce<false>(s, red);
  const float r = 1.0f / s;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * r;
}
"""

_HOST = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

torch::Tensor softmax_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t cols = x.size(-1);
  if (x.numel() == 0) return y;
  const int64_t rows = x.numel() / cols;
  TORCH_CHECK(rows <= 0x7fffffff, "too many rows");
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(xp) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(yp) % 16 == 0;
  const dim3 grid((unsigned)rows), block(SOFTMAX_THREADS);
  const int c = (int)cols;
  if (vec && cols <= 1024) {
    softmax_rows_reg_kernel<1><<<grid, block, 0, stream>>>(xp, yp, c);
  } else if (vec && cols <= 2048) {
    softmax_rows_reg_kernel<2><<<grid, block, 0, stream>>>(xp, yp, c);
  } else if (vec && cols <= 4096) {
    softmax_rows_reg_kernel<4><<<grid, block, 0, stream>>>(xp, yp, c);
  } else if (vec && cols <= 8192) {
    softmax_rows_reg_kernel<8><<<grid, block, 0, stream>>>(xp, yp, c);
  } else {
    softmax_rows_generic_kernel<<<grid, block, 0, stream>>>(xp, yp, cols);
  }
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_tsoftmax_cuda", cpp_sources=_DECL, cuda_sources=_KERNELS + _HOST,
                   functions=["softmax_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softmax_forward(x.contiguous())
