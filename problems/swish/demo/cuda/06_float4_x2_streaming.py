"""Two float4 per thread per step (more bytes in flight) and streaming stores (__stcs).

Demo candidate for problems/swish (kernelpro optimize --demo), written by the kernelpro project.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor swish_forward(torch::Tensor x);"

_KERNELS = r"""
#include <cstdint>

__device__ __forceinline__ float swish1(float v) { return v / (1.0f + __expf(-v)); }

__global__ void __launch_bounds__(256) swish_scalar_kernel(const float* __restrict__ x,
                                                           float* __restrict__ y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = swish1(x[i]);
}

// The n % 4 elements after the last float4, done by block 0.
__device__ __forceinline__ void swish_tail(const float* __restrict__ x, float* __restrict__ y,
                                           int64_t n) {
  if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
    const int64_t i = ((n >> 2) << 2) + threadIdx.x;
    y[i] = swish1(x[i]);
  }
}

__device__ __forceinline__ float4 swish4(float4 v) {
  v.x = swish1(v.x);
  v.y = swish1(v.y);
  v.z = swish1(v.z);
  v.w = swish1(v.w);
  return v;
}

__global__ void __launch_bounds__(256) swish_vec4_kernel(const float* __restrict__ x,
                                                         float* __restrict__ y, int64_t n) {
  const int64_t n4 = n >> 2;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + stride < n4; i += 2 * stride) {
    const float4 a = __ldg(x4 + i);
    const float4 b = __ldg(x4 + i + stride);
    __stcs(y4 + i, swish4(a));
    __stcs(y4 + i + stride, swish4(b));
  }
  if (i < n4) __stcs(y4 + i, swish4(__ldg(x4 + i)));
  swish_tail(x, y, n);
}
"""

_HOST = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>

torch::Tensor swish_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CUDA tensor");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t n = x.numel();
  if (n == 0) return y;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  (void)sms;
  const int threads = 256;
  const bool aligned = (reinterpret_cast<uintptr_t>(xp) % 16 == 0) &&
                       (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
  const int64_t work = aligned ? (n >> 2) / 2 + 1 : n;
  const int64_t blocks = std::max<int64_t>(1, std::min((work + threads - 1) / threads,
                                                       sms * (2048 / threads)));
  if (aligned) {
    swish_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  } else {
    swish_scalar_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  }
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_demo_swish_float4_x2", cpp_sources=_DECL, cuda_sources=_KERNELS + _HOST,
                   functions=["swish_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish_forward(x.contiguous())
