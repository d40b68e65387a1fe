"""CUDA candidate for 5_RowMean: y[r] = mean(x[r, :]), one warp per row.

The 64 MiB input is read once with 16-byte loads, four float4 per lane in flight per step; each
lane keeps a partial sum, the warp combines them with shuffles and lane 0 writes the mean. Eight
warps per block, so 8192 rows are 1024 blocks: several waves over the SMs with no block-level
synchronisation at all. Rows whose length is not a multiple of 4 or whose data is not 16-byte
aligned take a scalar loop. Written by the kernelpro project for the starter suite.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor row_mean_forward(torch::Tensor x);"

# Plain CUDA (no torch headers): compiles standalone with nvcc -arch=sm_90 -c.
_KERNELS = r"""
#include <cstdint>

constexpr int ROWS_PER_BLOCK = 8;  // one warp each

__global__ void __launch_bounds__(32 * ROWS_PER_BLOCK) row_mean_kernel(
    const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols, bool vec) {
  const int lane = threadIdx.x & 31;
  const int64_t row = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
  if (row >= rows) return;  // the whole warp leaves together
  const float* __restrict__ src = x + row * cols;
  float acc = 0.0f;
  if (vec) {
    const float4* __restrict__ src4 = reinterpret_cast<const float4*>(src);
    const int64_t n4 = cols / 4;
    float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    int64_t i = lane;
    for (; i + 96 < n4; i += 128) {  // four independent loads per lane per step
      const float4 a = __ldg(src4 + i), b = __ldg(src4 + i + 32);
      const float4 c = __ldg(src4 + i + 64), d = __ldg(src4 + i + 96);
      s.x += (a.x + b.x) + (c.x + d.x);
      s.y += (a.y + b.y) + (c.y + d.y);
      s.z += (a.z + b.z) + (c.z + d.z);
      s.w += (a.w + b.w) + (c.w + d.w);
    }
    for (; i < n4; i += 32) {
      const float4 a = __ldg(src4 + i);
      s.x += a.x;
      s.y += a.y;
      s.z += a.z;
      s.w += a.w;
    }
    acc = (s.x + s.y) + (s.z + s.w);
  } else {
    for (int64_t c = lane; c < cols; c += 32) acc += src[c];
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if (lane == 0) y[row] = acc / (float)cols;
}
"""

_HOST = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <vector>

torch::Tensor row_mean_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32 &&
              x.dim() >= 1, "x must be a contiguous float32 CUDA tensor");
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t cols = x.size(-1);
  std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end() - 1);
  torch::Tensor y = torch::empty(out_sizes, x.options());
  const int64_t rows = y.numel();
  if (rows == 0) return y;
  if (cols == 0) return y.fill_(NAN);
  const float* xp = x.data_ptr<float>();
  const bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(xp) % 16 == 0;
  const int64_t blocks = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
  TORCH_CHECK(blocks <= 0x7fffffff, "too many rows");
  row_mean_kernel<<<(unsigned)blocks, 32 * ROWS_PER_BLOCK, 0, at::cuda::getCurrentCUDAStream()>>>(
      xp, y.data_ptr<float>(), rows, cols, vec);
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_starter_row_mean_cuda", cpp_sources=_DECL,
                   cuda_sources=_KERNELS + _HOST, functions=["row_mean_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.row_mean_forward(x.contiguous())
