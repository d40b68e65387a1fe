"""Short-kernel timing candidate: y = relu(2x + 1) as three kernels per call.

Scale, shift and clamp each get their own launch (with two temporaries), so a call's time
includes the gaps between its kernels: what bench/short_kernel_timing.py checks a timer keeps.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor relu_affine_three(torch::Tensor x);"

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_kernel(const float* __restrict__ x, float* __restrict__ t, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) t[i] = 2.0f * x[i];
}

__global__ void shift_kernel(const float* __restrict__ t, float* __restrict__ u, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) u[i] = t[i] + 1.0f;
}

__global__ void clamp_kernel(const float* __restrict__ u, float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(u[i], 0.0f);
}

torch::Tensor relu_affine_three(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CUDA tensor");
  torch::Tensor t = torch::empty_like(x);
  torch::Tensor u = torch::empty_like(x);
  torch::Tensor y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;
  const int threads = 256;
  const unsigned blocks = (unsigned)((n + threads - 1) / threads);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  scale_kernel<<<blocks, threads, 0, stream>>>(x.data_ptr<float>(), t.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  shift_kernel<<<blocks, threads, 0, stream>>>(t.data_ptr<float>(), u.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  clamp_kernel<<<blocks, threads, 0, stream>>>(u.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="kp_bench_relu_affine_three", cpp_sources=_DECL, cuda_sources=_SOURCE,
                   functions=["relu_affine_three"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_affine_three(x.contiguous())
