"""A correct, compiled swish shared by the test candidates under */common/.

Those candidates cheat or fail in one named way; the swish they compute must be right, or they
would be rejected for the wrong reason. A C++ loop on CPU, plus a CUDA kernel when CUDA is
available. One extension name and source for all of them. No -O flag for the C++: its speed does
not matter, and it builds in half the time (7 s against 11 s with the precompiled header on the
2-core machine; each candidate's build scope builds it again).
Candidates import it with `from swish_ext import ext` after putting this folder on sys.path.
"""
import torch
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

HAS_CUDA = torch.cuda.is_available()
ext = load_inline(name="kp_test_swish_ext" + ("_cuda" if HAS_CUDA else ""),
                  cpp_sources=_CPP, cuda_sources=_CUDA if HAS_CUDA else None,
                  functions=["swish"], extra_cuda_cflags=["-O3"],
                  extra_cflags=["-DKP_WITH_CUDA"] if HAS_CUDA else [])
