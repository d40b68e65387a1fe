"""Gate case (CUDA, problems/swish/problem.py, --torch-ops allow): forward synchronises inside.

Correct swish in torch ops, then torch.cuda.synchronize() before returning: the host waits for
the device, so the harness's gate ends before forward's launches are all enqueued. Expected: the
verdict is correct, the candidate's blocks are timed ungated, `gate_held` false and a
`gate_not_held` warning that says the calls were still launching when the gate ended.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = x * torch.sigmoid(x)
        torch.cuda.synchronize()
        return y
