"""Fault (CUDA, target problems/swish/problem.py): host-side null-pointer write in the wrapper.

The host wrapper in the .cu file writes through a null pointer before launching anything. The
pointer is `volatile int64_t* volatile`, so the host compiler can neither fold it to a trap nor
drop the store; the process dies with SIGSEGV.
A correct harness must report: runtime_error (worker killed by SIGSEGV), and keep going.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swish(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
}

torch::Tensor swish(torch::Tensor x) {
  auto y = torch::empty_like(x);
  volatile int64_t* volatile n_out = nullptr;
  *n_out = x.numel();  // SIGSEGV on the host
  swish_kernel<<<256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), *n_out);
  return y;
}
"""

_ext = load_inline(name="kp_fault_cuda_segfault", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
