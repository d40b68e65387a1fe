"""PyTorch reference for problem.cu (the naive CUDA grouped GEMM): the outputs candidates must
match. Same inputs as the program: x (T, K) sorted by expert, offsets (E + 1, int64), w (E, K, N).
Expert e's rows x[offsets[e]:offsets[e + 1]] are multiplied by w[e]."""
import torch
import torch.nn as nn

COUNTS = [1000, 300, 760, 136, 520, 620, 380, 380]
T = sum(COUNTS)
K = 1024
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, offsets, w):
        bounds = offsets.tolist()
        outs = [torch.matmul(x[bounds[e]:bounds[e + 1]], w[e]) for e in range(w.shape[0])]
        return torch.cat(outs, dim=0)


def get_inputs():
    x = torch.randn(T, K)
    offsets = torch.tensor([0] + COUNTS, dtype=torch.int64).cumsum(0)
    w = torch.randn(len(COUNTS), K, N) / K ** 0.5
    return [x, offsets, w]


def get_init_inputs():
    return []
