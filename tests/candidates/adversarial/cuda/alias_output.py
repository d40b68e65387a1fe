"""Adversarial (CUDA, target problems/swish/problem.py): computes in place and returns x.

The kernel overwrites x with swish(x) and the wrapper returns x itself. Values are correct,
but the output is the input tensor (same storage) and the input is gone.
A correct harness must report: incorrect ("output aliases an input"; it also modified its input).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swish(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void swish_inplace_kernel(float* __restrict__ x, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    x[i] = v / (1.0f + expf(-v));
  }
}

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(),
              "contiguous float32 CUDA tensor expected");
  const int64_t n = x.numel();
  if (n == 0) return x;
  const int threads = 256;
  const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
  swish_inplace_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return x;
}
"""

_ext = load_inline(name="kp_adv_cuda_alias_output", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
