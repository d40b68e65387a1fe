"""A program (docs/programs.md) for the CPU tests: its launcher is plain PyTorch arithmetic, where a
real program would launch Triton or CUDA kernels. REFERENCE names the PyTorch problem that gives
the expected outputs; this program is the timing baseline."""
import torch


def scaled_add(x, y, alpha):
    return x + alpha * y


ENTRY = "scaled_add"
REFERENCE = "reference.py"


def get_inputs():
    return [torch.randn(256, 256), torch.randn(256, 256)]


def get_init_inputs():
    return [0.5]
