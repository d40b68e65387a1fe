"""Triton program: layer norm over the hidden dimension, y = (x - mean) * rstd * weight + bias.

A kernelpro program (docs/programs.md): ENTRY names the launcher, reference.py (PyTorch) gives
the outputs to match, and this file is the timing baseline.

Why it is slow: it runs two kernels. The first reads each row to compute mean and rstd (its
second, variance loop re-reads the row, mostly from L2) and writes them to memory; the second
reads x again from HBM to normalise. That is 3 x 128 MiB of HBM traffic (read, read, write)
where one read and one write suffice. The CUDA candidate keeps each row in registers (one
256-thread block per row, float4 loads, warp-shuffle reductions) and moves 2 x 128 MiB.
"""
import torch
import triton
import triton.language as tl

ROWS = 8192
HIDDEN = 4096
BLOCK = 1024


@triton.jit
def _ln_stats_kernel(x_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    # One program per row: mean, then the variance about it (two loops over the row).
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        acc += x
    mean = tl.sum(acc, axis=0) / n_cols
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        acc2 += d * d
    var = tl.sum(acc2, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def _ln_apply_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, y_ptr, n_cols,
                     BLOCK: tl.constexpr):
    # Grid (rows, column blocks): each program normalises BLOCK columns of one row.
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    y = (x - mean) * rstd * w + b
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


def layer_norm(x, weight, bias, eps):
    assert x.dim() == 2 and weight.shape == (x.shape[1],) and bias.shape == (x.shape[1],)
    x = x.contiguous()
    rows, cols = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(rows, device=x.device, dtype=torch.float32)
    rstd = torch.empty(rows, device=x.device, dtype=torch.float32)
    _ln_stats_kernel[(rows,)](x, mean, rstd, cols, eps, BLOCK=BLOCK)
    _ln_apply_kernel[(rows, triton.cdiv(cols, BLOCK))](x, weight, bias, mean, rstd, y, cols,
                                                       BLOCK=BLOCK)
    return y


ENTRY = "layer_norm"
REFERENCE = "reference.py"


def get_inputs():
    x = torch.randn(ROWS, HIDDEN)
    weight = 1.0 + 0.1 * torch.randn(HIDDEN)
    bias = 0.1 * torch.randn(HIDDEN)
    return [x, weight, bias]


def get_init_inputs():
    return [1e-5]
