"""float4 with one vector per thread and no loop: a grid of n/4 threads, no loop overhead.

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

__global__ void __launch_bounds__(256) swish_flat4_kernel(const float* __restrict__ x,
                                                          float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (n >> 2)) {
    float4 v = __ldg(reinterpret_cast<const float4*>(x) + i);
    v.x = swish1(v.x);
    v.y = swish1(v.y);
    v.z = swish1(v.z);
    v.w = swish1(v.w);
    reinterpret_cast<float4*>(y)[i] = v;
  }
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
  if (aligned) {
    const int64_t blocks = std::max<int64_t>(1, ((n >> 2) + threads - 1) / threads);
    swish_flat4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  } else {
    const int64_t blocks = std::min((n + threads - 1) / threads, sms * (2048 / threads));
    swish_scalar_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  }
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_demo_swish_float4_flat", cpp_sources=_DECL, cuda_sources=_KERNELS + _HOST,
                   functions=["swish_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish_forward(x.contiguous())
