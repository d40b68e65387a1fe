"""Fault (CUDA, target problems/swish/problem.py): the kernel writes through a wild pointer.

Every thread stores to ((float*)0x10)[i]; the launch itself succeeds, and the next synchronising
call fails with "an illegal memory access was encountered" (cudaErrorIllegalAddress). The CUDA
context is then unusable for the rest of the process.
A correct harness must report: runtime_error (illegal memory access), and keep going (in a fresh
worker process).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swish(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y,
                             float* wild, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + expf(-v));
    wild[i] = 1.0f;  // illegal address
  }
}

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "float32 CUDA tensor expected");
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
  swish_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), reinterpret_cast<float*>(0x10), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="kp_fault_cuda_illegal_address", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
