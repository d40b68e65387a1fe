"""CUDA reference: the sum of each row of a matrix, one thread per row.

A tiny CUDA-kind problem for the prompt tests. The reference builds its own kernel with
load_inline, as an existing CUDA implementation would; it is slow on purpose (each thread walks
its row serially, so a warp's loads are 2 KB apart and never coalesce).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ROWS = 1024
COLS = 512

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void row_sum_kernel(const float* x, float* out, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += x[(long)row * cols + c];
  out[row] = sum;
}

torch::Tensor row_sum(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32,
              "x: a 2-D float32 CUDA tensor");
  x = x.contiguous();
  const int rows = x.size(0), cols = x.size(1);
  torch::Tensor out = torch::empty({rows}, x.options());
  const int threads = 128;
  row_sum_kernel<<<(rows + threads - 1) / threads, threads, 0,
                   at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(),
                                                       out.data_ptr<float>(), rows, cols);
  return out;
}
"""

_ext = load_inline(name="kp_test_row_sum_reference",
                   cpp_sources="torch::Tensor row_sum(torch::Tensor x);", cuda_sources=_SOURCE,
                   functions=["row_sum"], verbose=False)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.row_sum(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
