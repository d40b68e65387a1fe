/* kernelpro
ENTRY = "grouped_gemm"
REFERENCE = "reference.py"

# MoE-style: tokens sorted by expert; expert e owns rows offsets[e]:offsets[e + 1] of x and
# multiplies them by its own weight w[e] (K x N). Uneven, fixed token counts (sum = T).
COUNTS = [1000, 300, 760, 136, 520, 620, 380, 380]
T = sum(COUNTS)
K = 1024
N = 1024

def get_inputs():
    x = torch.randn(T, K)
    offsets = torch.tensor([0] + COUNTS, dtype=torch.int64).cumsum(0)
    w = torch.randn(len(COUNTS), K, N) / K ** 0.5
    return [x, offsets, w]

def get_init_inputs():
    return []
*/
// CUDA program: grouped GEMM in the MoE style, y[t] = x[t] @ w[e(t)] for the expert e(t) whose
// rows [offsets[e], offsets[e + 1]) hold token t (docs/programs.md). fp32 inputs and output;
// offsets is int64 of length E + 1, nondecreasing, offsets[0] = 0 and offsets[E] = T.
//
// Why it is slow: one thread per output element, no tiling. Each thread walks all K of its row
// of x and its column of w[e] straight from global memory (L1/L2), so every x and w value is
// loaded N (or T) times and each FMA costs a load: bound by L1/L2 bandwidth, far from the fp32
// FMA peak. The CUDA candidate tiles each expert's rows in 64 x 64 output tiles with
// double-buffered shared-memory slices of x and w[e] and 8 x 4 register accumulators per
// thread (plain fp32 FFMA), so each loaded value feeds 32 to 64 FMAs.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

__global__ void grouped_gemm_naive_kernel(const float* __restrict__ x,
                                          const int64_t* __restrict__ offsets,
                                          const float* __restrict__ w, float* __restrict__ y,
                                          int experts, int64_t tokens, int64_t k_dim,
                                          int64_t n_dim) {
  const int64_t n = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t t = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
  if (t >= tokens || n >= n_dim) return;
  int e = 0;
  while (e + 1 < experts && offsets[e + 1] <= t) ++e;
  const float* xr = x + t * k_dim;
  const float* we = w + (int64_t)e * k_dim * n_dim + n;
  float acc = 0.0f;
  for (int64_t k = 0; k < k_dim; ++k) acc += xr[k] * we[k * n_dim];
  y[t * n_dim + n] = acc;
}

torch::Tensor grouped_gemm(torch::Tensor x, torch::Tensor offsets, torch::Tensor w) {
  TORCH_CHECK(x.is_cuda() && offsets.is_cuda() && w.is_cuda(), "inputs must be CUDA tensors");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && w.scalar_type() == torch::kFloat32,
              "x and w must be float32");
  TORCH_CHECK(offsets.scalar_type() == torch::kInt64, "offsets must be int64");
  TORCH_CHECK(x.dim() == 2 && w.dim() == 3 && offsets.dim() == 1,
              "expected x (T, K), offsets (E + 1), w (E, K, N)");
  TORCH_CHECK(w.size(1) == x.size(1) && offsets.size(0) == w.size(0) + 1, "shapes do not match");
  x = x.contiguous();
  offsets = offsets.contiguous();
  w = w.contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t tokens = x.size(0), k_dim = x.size(1), n_dim = w.size(2);
  const int experts = (int)w.size(0);
  torch::Tensor y = torch::empty({tokens, n_dim}, x.options());
  if (tokens == 0 || n_dim == 0) return y;
  TORCH_CHECK(experts > 0, "no experts");
  const dim3 block(32, 8);
  const dim3 grid((unsigned)((n_dim + 31) / 32), (unsigned)((tokens + 7) / 8));
  TORCH_CHECK(grid.y <= 65535, "too many tokens for this launch");
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  grouped_gemm_naive_kernel<<<grid, block, 0, stream>>>(
      x.data_ptr<float>(), offsets.data_ptr<int64_t>(), w.data_ptr<float>(), y.data_ptr<float>(),
      experts, tokens, k_dim, n_dim);
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
