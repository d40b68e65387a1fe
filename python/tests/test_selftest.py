"""doctor --timing's readings of the device records (no GPU needed: records are made up)."""

from kernelpro_worker import selftest


def rec(correlation, stream, start, end):
    return {"correlation": correlation, "stream": stream, "start_ns": start, "end_ns": end}


def test_regroup_reads_each_call_as_its_kernels_off_the_harness_stream_in_launch_order():
    harness = 7
    records = [
        rec(1, harness, 0, 100),          # refill, flush, marker: the harness's, left out
        rec(2, 0, 1_000, 2_000),          # call 1: three kernels, gaps of 3 us
        rec(3, 0, 5_000, 6_000),
        rec(4, 0, 9_000, 10_000),
        rec(5, harness, 11_000, 11_100),
        rec(8, 0, 30_000, 31_500),        # call 2, listed out of order
        rec(6, 0, 20_000, 21_000),
        rec(7, 0, 25_000, 26_000),
    ]
    calls = selftest.regroup(records, harness, 3)
    assert calls == [(9.0, 3.0), (11.5, 3.5)]  # (span us, summed kernel time us)


def test_records_that_do_not_split_into_calls_give_no_reading():
    records = [rec(i, 0, i * 10, i * 10 + 5) for i in range(4)]
    assert selftest.regroup(records, 7, 3) is None
    assert selftest.regroup([], 7, 1) is None


def test_one_kernel_calls_have_their_kernel_as_span_and_work():
    assert selftest.regroup([rec(1, 0, 0, 1_250)], 7, 1) == [(1.25, 1.25)]
