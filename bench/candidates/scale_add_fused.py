"""bench/problems/scale_add_2p18.py in one kernel: y = 1.5 * x + b, one element per thread."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor scale_add(torch::Tensor x, torch::Tensor b);"

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_add_kernel(const float* __restrict__ x, const float* __restrict__ b,
                                 float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 1.5f * x[i] + b[i];
}

torch::Tensor scale_add(torch::Tensor x, torch::Tensor b) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CUDA tensor");
  TORCH_CHECK(b.is_cuda() && b.is_contiguous() && b.scalar_type() == torch::kFloat32 &&
              b.numel() == x.numel(), "b must be a contiguous float32 CUDA tensor like x");
  torch::Tensor y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  scale_add_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="kp_bench_scale_add_fused", cpp_sources=_DECL, cuda_sources=_SOURCE,
                   functions=["scale_add"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, b):
        return _ext.scale_add(x, b)
