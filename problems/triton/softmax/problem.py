"""Triton program: row softmax, y = softmax(x, dim=-1), in three kernels.

A kernelpro program (docs/programs.md): ENTRY names the launcher, reference.py (PyTorch) gives
the outputs to match, and this file is the timing baseline.

Why it is slow: three kernels (row max, row sum of exp(x - max), normalise), each reading the
128 MiB input from HBM, with the per-row max and sum round-tripping through memory: 4 x 128 MiB
of traffic (three reads, one write) and a modest BLOCK of 512. The CUDA candidate keeps each row
in registers (one 256-thread block per row, float4 loads, warp-shuffle max and sum) and moves
2 x 128 MiB in one launch.
"""
import torch
import triton
import triton.language as tl

ROWS = 8192
COLS = 4096
BLOCK = 512


@triton.jit
def _row_max_kernel(x_ptr, max_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
        m = tl.maximum(m, x)
    tl.store(max_ptr + row, tl.max(m, axis=0))


@triton.jit
def _row_sum_kernel(x_ptr, max_ptr, sum_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    row_max = tl.load(max_ptr + row)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        acc += tl.where(mask, tl.exp(x - row_max), 0.0)
    tl.store(sum_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def _normalise_kernel(x_ptr, max_ptr, sum_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    # Grid (rows, column blocks): each program writes BLOCK columns of one row.
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    row_max = tl.load(max_ptr + row)
    row_sum = tl.load(sum_ptr + row)
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, tl.exp(x - row_max) / row_sum, mask=mask)


def softmax(x):
    assert x.dim() == 2
    x = x.contiguous()
    rows, cols = x.shape
    y = torch.empty_like(x)
    row_max = torch.empty(rows, device=x.device, dtype=torch.float32)
    row_sum = torch.empty(rows, device=x.device, dtype=torch.float32)
    _row_max_kernel[(rows,)](x, row_max, cols, BLOCK=BLOCK)
    _row_sum_kernel[(rows,)](x, row_max, row_sum, cols, BLOCK=BLOCK)
    _normalise_kernel[(rows, triton.cdiv(cols, BLOCK))](x, row_max, row_sum, y, cols, BLOCK=BLOCK)
    return y


ENTRY = "softmax"
REFERENCE = "reference.py"


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
