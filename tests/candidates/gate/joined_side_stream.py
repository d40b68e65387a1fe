"""Gate case (CUDA, problems/swish/problem.py, --torch-ops allow): an honest side stream.

forward makes a side stream wait for the current one, computes swish there, and makes the
current stream wait for the side stream before returning: the side stream's work queues behind
the gate through that wait. Expected: correct, `gate_held` true, a time like the reference's.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream()
        current = torch.cuda.current_stream()
        self.side.wait_stream(current)
        with torch.cuda.stream(self.side):
            y = x * torch.sigmoid(x)
        current.wait_stream(self.side)
        y.record_stream(current)
        return y
