"""Gate case (CUDA, problems/swish/problem.py, --torch-ops allow): a CUDA graph replay.

The swish of a static input buffer is captured once into a CUDA graph; each call copies its input
in, replays the graph on the current stream and returns a copy of the static output. Everything
is launched on the current stream, so the gate holds it. Expected: correct, `gate_held` true.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph = None

    def _capture(self, x):
        self.static_in = torch.empty_like(x)
        self.static_in.copy_(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up before capture, as torch's docs ask
            for _ in range(2):
                self.static_out = self.static_in * torch.sigmoid(self.static_in)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_out = self.static_in * torch.sigmoid(self.static_in)

    def forward(self, x):
        if self.graph is None or self.static_in.shape != x.shape:
            self._capture(x)
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
