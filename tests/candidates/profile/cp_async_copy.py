"""Profiling target for tests/problems/profile_copy.py: the cp.async kernel of
tests/fixtures/sass/cp_async.cu (global -> shared with cp.async.cg, then a rotated write back),
256 threads a block. The rotation makes it differ from the reference copy, so it is here for
`kernelpro profile` only: its SASS shows LDGSTS and ncu counts sm__sass_inst_executed_op_ldgsts.
"""
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "..", "..", "fixtures", "sass", "cp_async.cu")) as f:
    _KERNELS = f.read()

_HOST = r"""
#include <ATen/cuda/CUDAContext.h>
torch::Tensor cp_async_copy(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.numel() % 1024 == 0,
              "float32 CUDA tensor, a multiple of 1024 elements");
  auto y = torch::empty_like(x);
  int n4 = static_cast<int>(x.numel() / 4);
  cp_async_tile<<<n4 / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const float4*>(x.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()), n4);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="kp_profile_cp_async_copy", cpp_sources="torch::Tensor cp_async_copy(torch::Tensor x);",
                   cuda_sources="#include <torch/extension.h>\n" + _KERNELS + _HOST,
                   functions=["cp_async_copy"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.cp_async_copy(x.contiguous())
