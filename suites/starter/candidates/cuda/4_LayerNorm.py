"""CUDA candidate for 4_LayerNorm: y = (x - mean) * rsqrt(var + eps) * weight + bias per row.

Eager's native_layer_norm is already one kernel; this one aims to match it with the minimum
traffic. One 256-thread block owns one row: the row is read once with float4 loads into
registers (up to 8192 columns), the mean is reduced (warp shuffles, then a 32-float shared
buffer), then the variance of the deviations from the registers (two-pass, as accurate as
eager's Welford), and the affine result is written once: 128 MiB of traffic for 4096 x 4096.
Rows that do not fit the register path (more than 8192 columns, columns not a multiple of 4,
misaligned data) use a three-pass fallback. Written by the kernelpro project for the starter
suite.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = ("torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, "
         "torch::Tensor bias, double eps);")

# Plain CUDA (no torch headers): compiles standalone with nvcc -arch=sm_90 -c.
_KERNELS = r"""
#include <cstdint>

constexpr int LN_THREADS = 256;

// Sum over the block; every thread gets it. The first barrier guards `scratch`, so calls can
// follow one another.
__device__ __forceinline__ float ln_block_sum(float v, float* scratch) {
  for (int off = 16; off >= 1; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  v = (int)(threadIdx.x & 31) < warps ? scratch[threadIdx.x & 31] : 0.0f;
  for (int off = 16; off >= 1; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// Thread t holds float4 number t + i * LN_THREADS of the row, i < PER_THREAD.
// Needs cols % 4 == 0, cols <= 4 * LN_THREADS * PER_THREAD and 16-byte aligned x, w, b, y.
template <int PER_THREAD>
__global__ void __launch_bounds__(LN_THREADS) layer_norm_rows_kernel(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ y, int cols, float eps) {
  __shared__ float scratch[32];
  const int64_t base = (int64_t)blockIdx.x * cols;
  const float4* __restrict__ src = reinterpret_cast<const float4*>(x + base);
  float4* __restrict__ dst = reinterpret_cast<float4*>(y + base);
  const int n4 = cols / 4;
  float4 v[PER_THREAD];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) {
    const int c = threadIdx.x + i * LN_THREADS;
    v[i] = c < n4 ? __ldg(src + c) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
  }
  const float mean = ln_block_sum(sum, scratch) / (float)cols;
  float sq = 0.0f;
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) {
    const int c = threadIdx.x + i * LN_THREADS;
    if (c < n4) {
      const float dx = v[i].x - mean, dy = v[i].y - mean, dz = v[i].z - mean, dw = v[i].w - mean;
      sq += (dx * dx + dy * dy) + (dz * dz + dw * dw);
    }
  }
  const float rstd = rsqrtf(ln_block_sum(sq, scratch) / (float)cols + eps);
  const float4* __restrict__ w4 = reinterpret_cast<const float4*>(w);
  const float4* __restrict__ b4 = reinterpret_cast<const float4*>(b);
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) {
    const int c = threadIdx.x + i * LN_THREADS;
    if (c < n4) {
      const float4 g = __ldg(w4 + c), h = __ldg(b4 + c);
      dst[c] = make_float4((v[i].x - mean) * rstd * g.x + h.x, (v[i].y - mean) * rstd * g.y + h.y,
                           (v[i].z - mean) * rstd * g.z + h.z, (v[i].w - mean) * rstd * g.w + h.w);
    }
  }
}

// Any row length and alignment: the mean, the variance and the output in three passes.
__global__ void __launch_bounds__(LN_THREADS) layer_norm_any_kernel(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ y, int64_t cols, float eps) {
  __shared__ float scratch[32];
  const float* __restrict__ row = x + (int64_t)blockIdx.x * cols;
  float* __restrict__ out = y + (int64_t)blockIdx.x * cols;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += row[c];
  const float mean = ln_block_sum(sum, scratch) / (float)cols;
  float sq = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sq += (row[c] - mean) * (row[c] - mean);
  const float rstd = rsqrtf(ln_block_sum(sq, scratch) / (float)cols + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = (row[c] - mean) * rstd * w[c] + b[c];
}
"""

_HOST = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                 double eps) {
  TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
  TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(),
              "inputs must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
              bias.scalar_type() == torch::kFloat32, "inputs must be float32");
  TORCH_CHECK(x.dim() >= 1 && weight.dim() == 1 && bias.dim() == 1 &&
              weight.size(0) == x.size(-1) && bias.size(0) == x.size(-1),
              "weight and bias must match the last dimension of x");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t cols = x.size(-1);
  if (x.numel() == 0) return y;
  const int64_t rows = x.numel() / cols;
  TORCH_CHECK(rows <= 0x7fffffff, "too many rows");
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const float* xp = x.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  const float* bp = bias.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(xp) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(wp) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(bp) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(yp) % 16 == 0;
  const float e = static_cast<float>(eps);
  const dim3 grid((unsigned)rows), block(LN_THREADS);
  const int c = (int)cols;
  if (vec && cols <= 1024) {
    layer_norm_rows_kernel<1><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else if (vec && cols <= 2048) {
    layer_norm_rows_kernel<2><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else if (vec && cols <= 4096) {
    layer_norm_rows_kernel<4><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else if (vec && cols <= 8192) {
    layer_norm_rows_kernel<8><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else {
    layer_norm_any_kernel<<<grid, block, 0, stream>>>(xp, wp, bp, yp, cols, e);
  }
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_starter_layer_norm_cuda", cpp_sources=_DECL,
                   cuda_sources=_KERNELS + _HOST, functions=["layer_norm_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.hidden = hidden
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden))

    def forward(self, x):
        return _ext.layer_norm_forward(x.contiguous(), self.weight.contiguous(),
                                       self.bias.contiguous(), float(self.eps))
