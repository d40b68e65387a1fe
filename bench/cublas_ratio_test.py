import pytest

import cublas_ratio


def test_tflops_of_a_4096_cube_gemm():
    flops = cublas_ratio.gemm_flops((4096, 4096), (4096, 4096))
    assert flops == 2 * 4096 ** 3
    # 137.4 GFLOP in 0.2 ms is 687 TFLOP/s.
    assert cublas_ratio.tflops(flops, 0.2) == pytest.approx(687.19, rel=1e-4)


def test_mismatched_inner_dimensions_are_refused():
    with pytest.raises(ValueError, match="inner dimensions differ"):
        cublas_ratio.gemm_flops((64, 32), (16, 64))


def test_ratio_is_candidate_throughput_over_cublas_from_median_times():
    flops = cublas_ratio.gemm_flops((4096, 4096), (4096, 4096))
    row = cublas_ratio.summarize("4096x4096x4096", flops, [0.20, 0.21, 0.19], [0.25, 0.50, 0.24],
                                 0.0078)
    assert row["cublas_ms"] == 0.20 and row["candidate_ms"] == 0.25
    assert row["ratio"] == pytest.approx(0.8)  # 0.20 ms / 0.25 ms
    assert row["calls_per_side"] == 3
