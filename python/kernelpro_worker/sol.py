"""The facts a speed-of-light judgment needs, asked of the referee once per problem.

The work: the reference's FLOPs and bytes, from the Stage-1 `analyze` step (analyze.py says how
each is counted). The machine: on a GPU its name, which the binary looks up in its hardware
table (datasheet peaks); on the CPU, which has no such table, a calibration measured here, in the
trusted referee: the best bandwidth of a tensor copy sized like the problem's inputs (so a working
set that fits in the caches is calibrated in the caches too) and the best FLOP rate of a float32
matrix product. The binary turns both into the bound and the floor (src/eval/speed_of_light.h).
"""

import time

from .analyze_step import step_analyze

# Bounds of the calibration copy: at least 1 MiB (a smaller copy is all call overhead), at most
# 256 MiB (beyond every cache; more only costs time).
_COPY_MIN_BYTES = 1 << 20
_COPY_MAX_BYTES = 256 << 20
_MATMUL_N = 256
# The vector rate: a sum and a multiply-add over this many float32 elements (256 KiB, in the
# caches), so the rate is the cores' arithmetic, not the memory's.
_VECTOR_N = 1 << 16
_REPEATS = 3


def _best_seconds(fn, repeats):
    fn()  # first touch: page faults and the allocator stay out of the number
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def calibrate_cpu(torch, input_bytes):
    """What this CPU does at its best with torch: copy bandwidth (bytes read + written per
    second) over a copy of about `input_bytes`, float32 matmul FLOP/s, and the float32 vector
    FLOP/s of a sum and of a multiply-add in the caches. A torch whose BLAS is slow (Debian's
    1.13: about 2 GFLOP/s) multiplies matrices far below what its element-wise and reduction
    kernels reach (5-10 GFLOP/s), and work priced at the matmul rate alone let honest kernels read
    above 100 % of the bound (issue 43); the binary takes the higher rate."""
    n_bytes = int(min(max(input_bytes or 0, _COPY_MIN_BYTES), _COPY_MAX_BYTES))
    src = torch.ones(n_bytes // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    copy_s = _best_seconds(lambda: dst.copy_(src), _REPEATS)
    a = torch.ones(_MATMUL_N, _MATMUL_N, dtype=torch.float32)
    b = torch.ones(_MATMUL_N, _MATMUL_N, dtype=torch.float32)
    mm_s = _best_seconds(lambda: torch.mm(a, b), _REPEATS)
    x = torch.ones(_VECTOR_N, dtype=torch.float32)
    y = torch.empty_like(x)
    sum_s = _best_seconds(lambda: x.sum(), 10 * _REPEATS)
    fma_s = _best_seconds(lambda: torch.addcmul(x, x, x, out=y), 10 * _REPEATS)
    return {
        "copy_bytes": 4 * (n_bytes // 4),
        "copy_bytes_per_s": 2 * 4 * (n_bytes // 4) / max(copy_s, 1e-9),
        "matmul_flops_per_s": 2 * _MATMUL_N ** 3 / max(mm_s, 1e-9),
        "vector_flops_per_s": max(_VECTOR_N / max(sum_s, 1e-9), 2 * _VECTOR_N / max(fma_s, 1e-9)),
        "threads": torch.get_num_threads(),
    }


def best_of(earlier, later):
    """Two calibrations of one machine: each rate at its best (a loaded moment only slows one)."""
    best = dict(later)
    for rate in ("copy_bytes_per_s", "matmul_flops_per_s", "vector_flops_per_s"):
        best[rate] = max(earlier.get(rate, 0), later.get(rate, 0))
    best["calibrations"] = earlier.get("calibrations", 1) + 1
    return best


def speed_of_light_facts(torch, request):
    """The `analyze` result of the problem's reference plus, on the CPU, the calibration."""
    analysis = step_analyze(dict(request, seed=request.get("seed", 1)))
    facts = {"status": "ok", "message": "", "analysis": analysis}
    if request.get("device", "cpu") != "cuda":
        facts["calibration"] = calibrate_cpu(torch, analysis.get("input_bytes"))
    return facts
