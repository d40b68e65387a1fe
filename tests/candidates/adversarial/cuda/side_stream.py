"""Adversarial (CUDA, target problems/swish/problem.py): work on a private non-blocking stream.

forward launches a correct swish kernel on its own stream, created once with
cudaStreamCreateWithFlags(cudaStreamNonBlocking), preceded there by a one-thread kernel that
spins ~300 ms, and returns without making the current stream wait on it. Work queued on the
current (or legacy default) stream, and events recorded there, do not wait for it: a timer on
the current stream sees a nearly free forward, and a check queued on the current stream reads
the output before it is written. Only a device-wide synchronize hides the cheat.
A correct harness must report: incorrect ("work on a side stream").
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swish(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void delay_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(100000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
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
  const int64_t n = x.numel();
  static cudaStream_t side = nullptr;
  if (side == nullptr) C10_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  const int threads = 256;
  const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
  delay_kernel<<<1, 1, 0, side>>>(300ull * 1000 * 1000);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (n > 0) {
    swish_kernel<<<blocks, threads, 0, side>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;  // no event/wait joins `side` back into the current stream
}
"""

_ext = load_inline(name="kp_adv_cuda_side_stream", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
