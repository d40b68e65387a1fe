"""Fault (CUDA, target problems/swish/problem.py): CUDA source with a type error in the kernel.

`int* out = y;` initialises an int* from a float*; nvcc fails with 'a value of type "float *"
cannot be used to initialize an entity of type "int *"', and load_inline raises at import.
A correct harness must report: compile_error, quoting nvcc's message.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swish(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int* out = y;  // type error
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    out[i] = v / (1.0f + expf(-v));
  }
}

torch::Tensor swish(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  swish_kernel<<<256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

_ext = load_inline(name="kp_fault_cuda_compile_error", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
