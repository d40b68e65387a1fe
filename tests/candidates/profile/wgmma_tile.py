"""Profiling target for tests/problems/profile_mma_tile.py: the warpgroup-MMA kernel of
tests/fixtures/sass/wgmma.cu (one wgmma.mma_async m64n64k16 f16 -> f32), launched with one
warpgroup. Its output layout is the accumulator fragment, not the reference's row-major tile, so
`kernelpro eval` rightly calls it incorrect; it is here for `kernelpro profile`, whose ncu and
SASS views must show warpgroup MMA (HGMMA) on an H200.
"""
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "..", "..", "fixtures", "sass", "wgmma.cu")) as f:
    _KERNELS = f.read()

_HOST = r"""
#include <ATen/cuda/CUDAContext.h>
torch::Tensor wgmma_tile(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_cuda() && a.scalar_type() == torch::kHalf && a.numel() == 64 * 16, "a: 1024 halves");
  TORCH_CHECK(b.is_cuda() && b.scalar_type() == torch::kHalf && b.numel() == 64 * 16, "b: 1024 halves");
  auto d = torch::empty({64, 64}, a.options().dtype(torch::kFloat));
  wgmma_m64n64k16<<<1, 128, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const half*>(a.data_ptr<at::Half>()),
      reinterpret_cast<const half*>(b.data_ptr<at::Half>()), d.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return d;
}
"""

_ext = load_inline(name="kp_profile_wgmma_tile", cpp_sources="torch::Tensor wgmma_tile(torch::Tensor a, torch::Tensor b);",
                   cuda_sources="#include <torch/extension.h>\n" + _KERNELS + _HOST,
                   functions=["wgmma_tile"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _ext.wgmma_tile(a.contiguous(), b.contiguous())
