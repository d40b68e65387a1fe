from decimal import Decimal

import profile_calls

BASE = 1_764_000_000_000_000  # an absolute time in us: a float would round it to 0.25 us


def event(cat, ts, dur=0, name="x", correlation=None):
    e = {"ph": "X", "cat": cat, "name": name, "ts": Decimal(BASE) + Decimal(str(ts)),
         "dur": Decimal(str(dur)), "args": {}}
    if correlation is not None:
        e["args"]["correlation"] = correlation
    return e


def trace_of_two_calls():
    ann = profile_calls.ANNOTATION
    return {"traceEvents": [
        # Before the call, outside its range: the input refill and the L2 flush.
        event("cuda_runtime", 1, 2, "cudaLaunchKernel", correlation=1),
        event("kernel", 10, 30, "fill", correlation=1),
        # Call 1: three launches; kernels 2.5 us each with gaps of 1 us and 2 us.
        event("user_annotation", 5, 20, ann),
        event("gpu_user_annotation", 40, 12, ann),
        event("cuda_runtime", 6, 2, "cudaLaunchKernel", correlation=2),
        event("cuda_runtime", 9, 2, "cudaLaunchKernel", correlation=3),
        event("cuda_runtime", 12, 2, "cudaLaunchKernel", correlation=4),
        event("kernel", 40.0, 2.5, "scale", correlation=2),
        event("kernel", 43.5, 2.5, "shift", correlation=3),
        event("kernel", 48.0, 2.5, "clamp", correlation=4),
        # Call 2: one memset and one kernel.
        event("user_annotation", 100, 10, ann),
        event("cuda_runtime", 101, 1, "cudaMemsetAsync", correlation=5),
        event("cuda_driver", 103, 1, "cuLaunchKernel", correlation=6),
        event("gpu_memset", 120.0, 1.0, "memset", correlation=5),
        event("kernel", 121.5, 3.0, "k", correlation=6),
    ]}


def test_a_call_spans_its_first_kernel_start_to_its_last_kernel_end():
    calls = profile_calls.call_spans(trace_of_two_calls())
    assert len(calls) == 2
    first, second = calls
    assert first == {"span_us": 10.5, "sum_us": 7.5, "kernels": 3}  # gaps count in the span
    assert second == {"span_us": 4.5, "sum_us": 4.0, "kernels": 2}  # the memset counts


def test_a_call_without_gpu_work_has_no_span():
    ann = profile_calls.ANNOTATION
    calls = profile_calls.call_spans([event("user_annotation", 0, 5, ann)])
    assert calls == [{"span_us": None, "sum_us": None, "kernels": 0}]
    summary = profile_calls.summarize_calls(calls)
    assert summary["calls_with_gpu_work"] == 0 and summary["span_us"] is None


def test_summary_takes_medians_over_calls():
    spans = [{"span_us": s, "sum_us": s - 1, "kernels": 3} for s in (10.0, 12.0, 11.0)]
    summary = profile_calls.summarize_calls(spans)
    assert summary["span_us"] == 11.0 and summary["sum_us"] == 10.0
    assert summary["kernels_per_call"] == 3
