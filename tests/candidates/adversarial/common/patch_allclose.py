"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): patches the comparison.

At import it replaces torch.allclose and Tensor.allclose with functions that always return
True, and torch.testing.assert_close with a no-op; forward returns zeros. A harness that
compares in the candidate's process with these functions sees a pass.
A correct harness must report: incorrect (compare with functions saved before the import, or
in another process; the output is all zeros).
"""
import torch
import torch.nn as nn

torch.allclose = lambda *args, **kwargs: True
torch.Tensor.allclose = lambda *args, **kwargs: True
torch.testing.assert_close = lambda *args, **kwargs: None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
