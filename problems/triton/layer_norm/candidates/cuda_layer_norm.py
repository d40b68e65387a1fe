"""CUDA candidate for the Triton layer norm: y = (x - mean) * rstd * weight + bias in one kernel.

The Triton baseline runs a statistics kernel (writes mean and rstd) and a normalising kernel that
reads x from HBM a second time: 3 x 128 MiB of traffic. Here one 256-thread block owns one row:
the row is read once with float4 loads into registers (up to 8192 columns), the mean is reduced
with warp shuffles plus a 32-float shared buffer, then the variance about the mean (from the
registers, the same two-pass formula as the baseline), and the row is written once: 2 x 128 MiB,
about 1.5x less time. Rows that do not fit the register path (more than 8192 columns, columns not
a multiple of 4, misaligned data) use a three-pass fallback kernel.
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

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Block-wide sum; every thread gets the result. blockDim.x is a multiple of 32.
// The leading barrier lets the same `red` buffer be reused by consecutive calls.
__device__ __forceinline__ float block_sum(float v, float* red) {
  v = warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < (int)(blockDim.x >> 5) ? red[lane] : 0.0f;
  return warp_sum(v);
}

// One block per row, the row held in registers: thread t owns float4 columns t + i * 256, i < V.
// Requires cols % 4 == 0, 16-byte aligned x, weight, bias, y and cols <= 1024 * V.
template <int V>
__global__ void __launch_bounds__(LN_THREADS) layer_norm_reg_kernel(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ y, int cols, float eps) {
  __shared__ float red[32];
  const int64_t row = blockIdx.x;
  const float4* __restrict__ xr = reinterpret_cast<const float4*>(x + row * cols);
  const float4* __restrict__ w4 = reinterpret_cast<const float4*>(w);
  const float4* __restrict__ b4 = reinterpret_cast<const float4*>(b);
  float4* __restrict__ yr = reinterpret_cast<float4*>(y + row * cols);
  const int c4 = cols >> 2;
  float4 v[V];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int c = threadIdx.x + i * LN_THREADS;
    if (c < c4) {
      v[i] = __ldg(xr + c);
      s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  }
  const float mean = block_sum(s, red) / (float)cols;
  float ss = 0.0f;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int c = threadIdx.x + i * LN_THREADS;
    if (c < c4) {
      v[i].x -= mean;
      v[i].y -= mean;
      v[i].z -= mean;
      v[i].w -= mean;
      ss += (v[i].x * v[i].x + v[i].y * v[i].y) + (v[i].z * v[i].z + v[i].w * v[i].w);
    }
  }
  const float rstd = rsqrtf(block_sum(ss, red) / (float)cols + eps);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int c = threadIdx.x + i * LN_THREADS;
    if (c < c4) {
      const float4 g = __ldg(w4 + c);
      const float4 h = __ldg(b4 + c);
      yr[c] = make_float4(v[i].x * rstd * g.x + h.x, v[i].y * rstd * g.y + h.y,
                          v[i].z * rstd * g.z + h.z, v[i].w * rstd * g.w + h.w);
    }
  }
}

// Fallback for any row length and alignment: three passes over the row.
__global__ void __launch_bounds__(LN_THREADS) layer_norm_generic_kernel(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ y, int64_t cols, float eps) {
  __shared__ float red[32];
  const float* __restrict__ xr = x + (int64_t)blockIdx.x * cols;
  float* __restrict__ yr = y + (int64_t)blockIdx.x * cols;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  const float mean = block_sum(s, red) / (float)cols;
  float ss = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = xr[c] - mean;
    ss += d * d;
  }
  const float rstd = rsqrtf(block_sum(ss, red) / (float)cols + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
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
                  bias.scalar_type() == torch::kFloat32,
              "inputs must be float32");
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
    layer_norm_reg_kernel<1><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else if (vec && cols <= 2048) {
    layer_norm_reg_kernel<2><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else if (vec && cols <= 4096) {
    layer_norm_reg_kernel<4><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else if (vec && cols <= 8192) {
    layer_norm_reg_kernel<8><<<grid, block, 0, stream>>>(xp, wp, bp, yp, c, e);
  } else {
    layer_norm_generic_kernel<<<grid, block, 0, stream>>>(xp, wp, bp, yp, cols, e);
  }
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_tlayer_norm_cuda", cpp_sources=_DECL, cuda_sources=_KERNELS + _HOST,
                   functions=["layer_norm_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight, bias):
        return _ext.layer_norm_forward(x.contiguous(), weight.contiguous(), bias.contiguous(),
                                       float(self.eps))
