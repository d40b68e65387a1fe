"""Adversarial (CUDA, target problems/swish/problem.py): a head start on a side stream.

forward launches a correct swish kernel on its own non-blocking stream WITHOUT waiting for the
current stream first, then joins it back properly (an event on the side stream, waited on by the
current one), so no work is left running when forward returns and the static check's "never
makes the current stream wait" does not apply. The point is the timer: inputs are refilled and
the L2 flushed on the current stream before each timed call, so while the current stream is
still busy with the flush (tens of us on an H200) the side kernel already runs, before the begin
event of the call, and a timer whose begin event sits behind the flush sees only the tail of it.
A correct harness must not report a speedup from it: its time is the kernel's (about that of
problems/swish/candidates/cuda_swish.py, the same kernel on the current stream), or its outputs
are wrong (the side kernel raced the refill) and the verdict is incorrect.
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
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "float32 CUDA tensor expected");
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  static cudaStream_t side = nullptr;
  static cudaEvent_t done = nullptr;
  if (side == nullptr) {
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    C10_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  }
  const int threads = 256;
  const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
  if (n > 0) {
    // No wait for the current stream here: the head start.
    swish_kernel<<<blocks, threads, 0, side>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  // Joined back: the current stream (and its end event) waits for the side kernel.
  C10_CUDA_CHECK(cudaEventRecord(done, side));
  C10_CUDA_CHECK(cudaStreamWaitEvent(at::cuda::getCurrentCUDAStream(), done, 0));
  return y;
}
"""

_ext = load_inline(name="kp_adv_cuda_head_start", cpp_sources=_CPP, cuda_sources=_CUDA,
                   functions=["swish"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
