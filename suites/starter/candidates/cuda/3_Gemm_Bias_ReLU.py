"""CUDA candidate for 3_Gemm_Bias_ReLU: y = relu(x @ W^T + b) with bias and ReLU in the epilogue.

A SIMT fp32 GEMM (no TF32, like the reference): each 256-thread block computes a 128 x 128 tile of
y, stepping through K eight columns at a time. x and W tiles are loaded with one float4 per
thread and stored k-major in shared memory (padded by 4 floats so the transposing stores do not
collide in banks); every thread then accumulates an 8 x 8 sub-tile from float4 reads, rows
{4ty..4ty+3, 64+4ty..} and columns {4tx..4tx+3, 64+4tx..}. The next tile's global loads are
issued before the barrier that ends the current step. Bias and ReLU are applied in registers and
y is written once with float4 stores, so the 16 MiB output is never re-read as eager's separate
ReLU kernel does. Edges in M, N and K are guarded; misaligned or K % 4 != 0 inputs use scalar
loads. Written by the kernelpro project for the starter suite.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = ("torch::Tensor gemm_bias_relu_forward(torch::Tensor x, torch::Tensor weight, "
         "torch::Tensor bias);")

# Plain CUDA (no torch headers): compiles standalone with nvcc -arch=sm_90 -c.
_KERNELS = r"""
#include <cstdint>

constexpr int TILE_M = 128, TILE_N = 128, TILE_K = 8, SMEM_PAD = 4;

// Four consecutive k of row `row` of a (rows x K) row-major matrix, zero outside it.
__device__ __forceinline__ float4 load_k4(const float* __restrict__ p, int rows, int K, int row,
                                          int k, bool vec) {
  if (row >= rows) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float* src = p + (int64_t)row * K + k;
  if (vec) return k < K ? __ldg(reinterpret_cast<const float4*>(src))
                        : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  return make_float4(k < K ? __ldg(src) : 0.0f, k + 1 < K ? __ldg(src + 1) : 0.0f,
                     k + 2 < K ? __ldg(src + 2) : 0.0f, k + 3 < K ? __ldg(src + 3) : 0.0f);
}

__device__ __forceinline__ float bias_relu(float acc, float b) {
  const float v = acc + b;
  return v > 0.0f ? v : 0.0f;
}

// vec_k: K % 4 == 0 and x, W 16-byte aligned. vec_n: N % 4 == 0 and bias, y 16-byte aligned.
__global__ void __launch_bounds__(256) gemm_bias_relu_kernel(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
    float* __restrict__ y, int M, int N, int K, bool vec_k, bool vec_n) {
  __shared__ __align__(16) float xs[TILE_K][TILE_M + SMEM_PAD];
  __shared__ __align__(16) float ws[TILE_K][TILE_N + SMEM_PAD];
  const int tid = threadIdx.x;
  const int tx = tid & 15, ty = tid >> 4;
  const int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
  const int load_row = tid >> 1, load_k = (tid & 1) * 4;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  }

  float4 xa = load_k4(x, M, K, m0 + load_row, load_k, vec_k);
  float4 wa = load_k4(w, N, K, n0 + load_row, load_k, vec_k);
  for (int k0 = 0; k0 < K; k0 += TILE_K) {
    xs[load_k + 0][load_row] = xa.x;
    xs[load_k + 1][load_row] = xa.y;
    xs[load_k + 2][load_row] = xa.z;
    xs[load_k + 3][load_row] = xa.w;
    ws[load_k + 0][load_row] = wa.x;
    ws[load_k + 1][load_row] = wa.y;
    ws[load_k + 2][load_row] = wa.z;
    ws[load_k + 3][load_row] = wa.w;
    __syncthreads();
    if (k0 + TILE_K < K) {  // the next step's loads are in flight during this step's math
      xa = load_k4(x, M, K, m0 + load_row, k0 + TILE_K + load_k, vec_k);
      wa = load_k4(w, N, K, n0 + load_row, k0 + TILE_K + load_k, vec_k);
    }
#pragma unroll
    for (int kk = 0; kk < TILE_K; ++kk) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&xs[kk][ty * 4]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&xs[kk][64 + ty * 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&ws[kk][tx * 4]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&ws[kk][64 + tx * 4]);
      const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // everyone is done reading xs, ws before they are overwritten
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (row >= M) continue;
    float* __restrict__ out = y + (int64_t)row * N;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = n0 + half * 64 + tx * 4;
      const float* v = &acc[i][half * 4];
      if (vec_n && col + 3 < N) {
        const float4 bb = __ldg(reinterpret_cast<const float4*>(bias + col));
        *reinterpret_cast<float4*>(out + col) = make_float4(
            bias_relu(v[0], bb.x), bias_relu(v[1], bb.y), bias_relu(v[2], bb.z),
            bias_relu(v[3], bb.w));
      } else {
        for (int j = 0; j < 4; ++j) {
          if (col + j < N) out[col + j] = bias_relu(v[j], __ldg(bias + col + j));
        }
      }
    }
  }
}
"""

_HOST = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

torch::Tensor gemm_bias_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
  TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(),
              "inputs must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
              bias.scalar_type() == torch::kFloat32, "inputs must be float32");
  TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && bias.dim() == 1 &&
              weight.size(1) == x.size(1) && bias.size(0) == weight.size(0),
              "shapes must be x (M, K), weight (N, K), bias (N)");
  const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
  TORCH_CHECK(M < (1LL << 31) && N < (1LL << 31) && K < (1LL << 31), "sizes must fit in int");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty({M, N}, x.options());
  if (M == 0 || N == 0) return y;
  if (K == 0) return y.copy_(bias.expand({M, N})).clamp_min_(0.0f);
  const float* xp = x.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  const float* bp = bias.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vec_k = K % 4 == 0 && aligned(xp) && aligned(wp);
  const bool vec_n = N % 4 == 0 && aligned(bp) && aligned(yp);
  const dim3 grid((unsigned)((N + TILE_N - 1) / TILE_N), (unsigned)((M + TILE_M - 1) / TILE_M));
  gemm_bias_relu_kernel<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      xp, wp, bp, yp, (int)M, (int)N, (int)K, vec_k, vec_n);
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_starter_gemm_bias_relu_cuda", cpp_sources=_DECL,
                   cuda_sources=_KERNELS + _HOST, functions=["gemm_bias_relu_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return _ext.gemm_bias_relu_forward(x.contiguous(), self.linear.weight.contiguous(),
                                           self.linear.bias.contiguous())
