"""One thread per element: y = x / (1 + exp(-x)), one read and one write of the tensor.

Demo candidate for problems/swish (kernelpro optimize --demo), written by the kernelpro project.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor swish_forward(torch::Tensor x);"

_KERNELS = r"""
#include <cstdint>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
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
  const int64_t blocks = (n + threads - 1) / threads;
  swish_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_demo_swish_one_per_element", cpp_sources=_DECL, cuda_sources=_KERNELS + _HOST,
                   functions=["swish_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish_forward(x.contiguous())
