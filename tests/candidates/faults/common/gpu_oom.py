"""Fault (common; tiny_swish on CPU, problems/swish on CUDA): allocates 2**45 floats (128 TiB).

forward calls torch.empty(1 << 45, device=x.device). On CUDA this raises torch.cuda.OutOfMemoryError
("CUDA out of memory. Tried to allocate 128.00 TiB"); on CPU it raises RuntimeError
("DefaultCPUAllocator: can't allocate memory: you tried to allocate 140737488355328 bytes")
at once, without touching the memory.
A correct harness must report: runtime_error (out of memory), and keep going.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        scratch = torch.empty(1 << 45, device=x.device)
        return scratch[: x.numel()].view_as(x)
