"""CUDA candidate for 6_NewGELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in one pass.

Eager runs seven elementwise kernels over the 64 MiB tensor (pow, three multiplies, two adds,
tanh); here one grid-stride loop over one wave of resident blocks reads each element once with
float4 loads and writes it once: 128 MiB of traffic. The tanh is the accurate tanhf (the
approximation is the formula's, not the kernel's). A misaligned view takes the scalar loop.
Written by the kernelpro project for the starter suite.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor new_gelu_forward(torch::Tensor x);"

# Plain CUDA (no torch headers): compiles standalone with nvcc -arch=sm_90 -c.
_KERNELS = r"""
#include <cstdint>

__device__ __forceinline__ float new_gelu(float v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

__global__ void __launch_bounds__(256) new_gelu_vec_kernel(const float* __restrict__ x,
                                                           float* __restrict__ y, int64_t n) {
  const int64_t n4 = n / 4;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n4; i += step) {
    const float4 v = __ldg(x4 + i);
    y4[i] = make_float4(new_gelu(v.x), new_gelu(v.y), new_gelu(v.z), new_gelu(v.w));
  }
  // The last n % 4 elements.
  for (int64_t i = n4 * 4 + first; i < n; i += step) y[i] = new_gelu(x[i]);
}

__global__ void __launch_bounds__(256) new_gelu_scalar_kernel(const float* __restrict__ x,
                                                              float* __restrict__ y, int64_t n) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    y[i] = new_gelu(x[i]);
}
"""

_HOST = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>

torch::Tensor new_gelu_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CUDA tensor");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t n = x.numel();
  if (n == 0) return y;
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const bool aligned = reinterpret_cast<uintptr_t>(xp) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(yp) % 16 == 0;
  const int threads = 256;
  const int64_t resident = (int64_t)at::cuda::getCurrentDeviceProperties()->multiProcessorCount *
                           (2048 / threads);
  const int64_t work = aligned ? std::max<int64_t>(n / 4, 1) : n;
  const int64_t blocks = std::min((work + threads - 1) / threads, resident);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (aligned) {
    new_gelu_vec_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  } else {
    new_gelu_scalar_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  }
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_starter_new_gelu_cuda", cpp_sources=_DECL,
                   cuda_sources=_KERNELS + _HOST, functions=["new_gelu_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.new_gelu_forward(x.contiguous())
