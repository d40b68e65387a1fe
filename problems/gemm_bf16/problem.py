"""GEMM: C = A @ B in bf16 (fp32 accumulation, as cuBLAS does), A (M, K), B (K, N), 4096 each.

Compute-bound: 2 * 4096^3 = 137 GFLOP per call, which only tensor cores (on an H200, warpgroup
MMA) run near peak; eager PyTorch calls cuBLAS, so this is the bar a CUTLASS/CuTe kernel is
measured against.

The inputs are standard normal values times powers of two (exact in bf16) chosen so the output's
standard deviation is 1/32 (sqrt(4096) * 2^-5 * 2^-6). Why so small: a correct bf16 kernel and
cuBLAS round the same fp32 sum to bf16 and can differ by one bf16 step (2^-8 relative), which
the default tolerance (atol 1e-2 + rtol 1e-3 * |ref|) accepts only while |ref| < 2. The harness's
extra trials multiply every input element by a random sign and a factor in [1/8, 8], which
widens the output about 7.7-fold; at std 1/32 the largest extra-trial outputs stay near 1.4, so
rounding differences pass, while a wrong layout, a dropped k-tile or a missing tile (errors of
the output's own size, 0.03 to 0.2) still fails. problems/gemm_bf16/README.md has the arithmetic.
"""
import torch
import torch.nn as nn

M = 4096
N = 4096
K = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = (torch.randn(M, K) * 2.0 ** -5).to(torch.bfloat16)
    B = (torch.randn(K, N) * 2.0 ** -6).to(torch.bfloat16)
    return [A, B]


def get_init_inputs():
    return []
