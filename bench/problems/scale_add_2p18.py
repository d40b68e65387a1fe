"""Two short kernels per call: y = 1.5 * x + b at 2^18 float32 elements, as two ops (a scale, then
an add). With bench/candidates/scale_add_fused.py (the same in one kernel) it is the fused-vs-two-
kernel pair of bench/gated_ratio.py: the reference's second launch waits on the host in an
ungated timer, which charges that gap to the reference."""
import torch
import torch.nn as nn

N = 1 << 18


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, b):
        return x * 1.5 + b


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
