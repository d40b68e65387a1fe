/* kernelpro
ENTRY = "row_softmax"
REFERENCE = "reference.py"

ROWS = 8192
COLS = 2048

def get_inputs():
    return [torch.randn(ROWS, COLS)]

def get_init_inputs():
    return []
*/
// CUDA program: row softmax, y = softmax(x, dim=-1), written the naive way (docs/programs.md).
//
// Why it is slow: one thread per row, three serial passes over its 2048 columns (max, sum of
// exp, normalise). A warp's 32 loads hit 32 different rows (uncoalesced, one 32-byte sector per
// thread), the input is read three times, and only 8192 threads (64 blocks) run on 132 SMs, so
// the kernel is latency-bound far below HBM bandwidth. The CUDA candidate gives each row a
// 256-thread block (coalesced float4 loads, row kept in registers, warp-shuffle max and sum) and
// reads and writes each element once.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int NAIVE_THREADS = 128;

__global__ void row_softmax_naive_kernel(const float* __restrict__ x, float* __restrict__ y,
                                         int64_t rows, int64_t cols) {
  const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* xr = x + row * cols;
  float* yr = y + row * cols;
  float m = -INFINITY;
  for (int64_t c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0.0f;
  for (int64_t c = 0; c < cols; ++c) s += expf(xr[c] - m);
  for (int64_t c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) / s;
}

torch::Tensor row_softmax(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  TORCH_CHECK(x.dim() == 2, "x must be 2-D (rows, cols)");
  x = x.contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1);
  if (x.numel() == 0) return y;
  const int64_t blocks = (rows + NAIVE_THREADS - 1) / NAIVE_THREADS;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  row_softmax_naive_kernel<<<(unsigned)blocks, NAIVE_THREADS, 0, stream>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
