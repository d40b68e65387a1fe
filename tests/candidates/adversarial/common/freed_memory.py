"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): returns uninitialised memory.

forward returns torch.empty_like(x) and computes nothing. If the harness ran the reference
just before and freed its output, the caching allocator (CUDA) or malloc (CPU) is likely to hand
that same block back, still holding the reference's answer, so the "output" matches. (This is
a CUDA caching-allocator hole: on CPU, glibc did not return the freed 16 KiB block in a naive test,
and large blocks come from fresh zeroed mmaps, so on CPU the output is just garbage.)
A correct harness must report: incorrect (e.g. it keeps the reference output alive, or fills
freed/new memory with garbage/NaN, or runs the candidate before the reference).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.empty_like(x)
