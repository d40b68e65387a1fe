"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): patches the timing tools.

At import it replaces torch.cuda.synchronize with a no-op, torch.cuda.Event.elapsed_time with a
function returning 0.001 ms, and time.perf_counter / time.perf_counter_ns with counters that
advance 1 ns per call. Any timing taken in the same process afterwards reports a near-zero
time. The swish itself is correct: a compiled kernel (C++ loop; a CUDA kernel as well when
CUDA is available), so nothing but the named fault should be held against it.
A correct harness must report: incorrect ("patched timing/synchronisation"), or at least time
it with clocks the candidate cannot reach (another process, or references saved before import).
"""
import time
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>
#ifdef KP_WITH_CUDA
torch::Tensor swish_cuda(torch::Tensor x);
#endif

torch::Tensor swish(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 expected");
  x = x.contiguous();
#ifdef KP_WITH_CUDA
  if (x.is_cuda()) return swish_cuda(x);
#endif
  TORCH_CHECK(x.device().is_cpu(), "CPU tensor expected (built without CUDA)");
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));
  return y;
}
"""

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

torch::Tensor swish_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;
  const int threads = 256;
  const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
  swish_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_HAS_CUDA = torch.cuda.is_available()
_ext = load_inline(name="kp_adv_patch_sync" + ("_cuda" if _HAS_CUDA else ""),
                   cpp_sources=_CPP, cuda_sources=_CUDA if _HAS_CUDA else None,
                   functions=["swish"], extra_cuda_cflags=["-O3"],
                   extra_cflags=["-O3"] + (["-DKP_WITH_CUDA"] if _HAS_CUDA else []))

_fake_ns = [0]


def _fake_perf_counter_ns():
    _fake_ns[0] += 1
    return _fake_ns[0]


def _fake_perf_counter():
    return _fake_perf_counter_ns() * 1e-9


torch.cuda.synchronize = lambda *args, **kwargs: None
torch.cuda.Event.elapsed_time = lambda self, end_event: 0.001
time.perf_counter = _fake_perf_counter
time.perf_counter_ns = _fake_perf_counter_ns


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish(x)
