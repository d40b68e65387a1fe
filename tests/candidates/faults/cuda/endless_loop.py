"""Fault (CUDA, target problems/swish/problem.py): a kernel that never finishes.

forward launches, on the current stream, a one-thread kernel spinning on a volatile flag in
device memory that nothing ever sets, then the swish kernel behind it, and returns. The launch
returns at once; the hang shows at the next synchronisation (the output never becomes ready).
A correct harness must report: timeout (kill the worker from outside; the GPU frees when the
process dies), and keep going.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swish(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void spin_kernel(volatile int* flag) {
  while (*flag == 0) {
  }
}

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
}

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "float32 CUDA tensor expected");
  x = x.contiguous();
  auto y = torch::empty_like(x);
  auto flag = torch::zeros({1}, x.options().dtype(torch::kInt));
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  spin_kernel<<<1, 1, 0, stream>>>(flag.data_ptr<int>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  swish_kernel<<<blocks, threads, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="kp_fault_cuda_endless_loop", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
