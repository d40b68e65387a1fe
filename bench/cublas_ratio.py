#!/usr/bin/env python3
"""How close does a GEMM candidate come to cuBLAS? TFLOP/s of both and their ratio, on a GPU.

Loads a problem (`Model`, `get_inputs`) and a candidate (`ModelNew`) from their files, moves the
problem's inputs to the GPU, checks the candidate's output against the reference once (reported,
not asserted), then times the reference (eager `torch.matmul`, i.e. cuBLAS) and the candidate
with CUDA events: a warm-up, then `--rounds` interleaved rounds of `--iters` back-to-back calls
per side (reference first in even rounds, candidate first in odd ones), one event pair per call.
The table gives median ms per call, TFLOP/s (2*M*N*K / time) and candidate/cuBLAS throughput.

Issue 18 asks for at least 70 % of cuBLAS at 4096^3 on an H200:

    CUTLASS_DIR=/path/to/cutlass python3 bench/cublas_ratio.py \
        --problem problems/gemm_bf16/problem.py \
        --candidate problems/gemm_bf16/candidates/cuda_gemm_cutlass.py [--json out.json]

`--shape M,N,K` (repeatable) times other sizes too, on randn inputs with the standard deviations
of the problem's A and B. This is a measurement, not a test: nothing is asserted.
"""

import argparse
import importlib.util
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gemm_flops(a_shape, b_shape):
    """2*M*N*K for A (M, K) @ B (K, N)."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {tuple(a_shape)} @ {tuple(b_shape)}")
    return 2.0 * m * n * k


def tflops(flops, ms):
    return flops / (ms * 1e-3) / 1e12 if ms and ms > 0 else None


def summarize(shape, flops, ref_ms, cand_ms, max_abs_err):
    """One table row's numbers from per-call times (lists of ms)."""
    ref_med = statistics.median(ref_ms)
    cand_med = statistics.median(cand_ms)
    ref_tf = tflops(flops, ref_med)
    cand_tf = tflops(flops, cand_med)
    return {"shape": shape, "cublas_ms": ref_med, "candidate_ms": cand_med,
            "cublas_tflops": ref_tf, "candidate_tflops": cand_tf,
            "ratio": benchlib.ratio(cand_tf, ref_tf), "max_abs_err": max_abs_err,
            "calls_per_side": len(ref_ms)}


def time_calls(torch, fn, args, iters):
    """Per-call ms of `iters` back-to-back calls, each between its own pair of events."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
    for begin, end in events:
        begin.record()
        fn(*args)
        end.record()
    torch.cuda.synchronize()
    return [begin.elapsed_time(end) for begin, end in events]


def measure(torch, reference, candidate, inputs, warmup, rounds, iters):
    out_ref = reference(*inputs)
    out_cand = candidate(*inputs)
    torch.cuda.synchronize()
    max_abs_err = float((out_cand.float() - out_ref.float()).abs().max())
    for _ in range(warmup):
        reference(*inputs)
        candidate(*inputs)
    torch.cuda.synchronize()
    ref_ms, cand_ms = [], []
    for r in range(rounds):
        order = [(reference, ref_ms), (candidate, cand_ms)]
        for fn, sink in (order if r % 2 == 0 else order[::-1]):
            sink.extend(time_calls(torch, fn, inputs, iters))
    return ref_ms, cand_ms, max_abs_err


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problem", default="problems/gemm_bf16/problem.py")
    parser.add_argument("--candidate", default="problems/gemm_bf16/candidates/cuda_gemm_cutlass.py")
    parser.add_argument("--shape", action="append", default=[],
                        help="M,N,K to time besides the problem's own inputs (repeatable)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=10, help="calls per side per round")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)

    import torch
    if not torch.cuda.is_available():
        print("cublas_ratio: no CUDA device", file=sys.stderr)
        return 2
    problem = load_module(args.problem, "kp_bench_problem")
    candidate_module = load_module(args.candidate, "kp_bench_candidate")
    torch.manual_seed(0)
    reference = problem.Model(*problem.get_init_inputs()).cuda().eval()
    torch.manual_seed(0)
    candidate = candidate_module.ModelNew(*problem.get_init_inputs()).cuda().eval()

    input_sets = [("problem", [t.cuda() for t in problem.get_inputs()])]
    a0, b0 = input_sets[0][1]
    a_scale = float(a0.float().std()) or 1.0
    b_scale = float(b0.float().std()) or 1.0
    for text in args.shape:
        m, n, k = (int(v) for v in text.split(","))
        a = (torch.randn(m, k, device="cuda") * a_scale).to(a0.dtype)
        b = (torch.randn(k, n, device="cuda") * b_scale).to(b0.dtype)
        input_sets.append((text, [a, b]))

    rows = []
    with torch.no_grad():
        for label, inputs in input_sets:
            a, b = inputs
            shape = f"{a.shape[0]}x{b.shape[1]}x{a.shape[1]}"
            ref_ms, cand_ms, err = measure(torch, reference, candidate, inputs, args.warmup,
                                           args.rounds, args.iters)
            rows.append(summarize(shape, gemm_flops(a.shape, b.shape), ref_ms, cand_ms, err))

    device = torch.cuda.get_device_name()
    print(f"device: {device}; torch {torch.__version__}; {args.rounds} rounds x {args.iters} "
          "calls per side, median per call\n")
    table = [[r["shape"], benchlib.fmt(r["cublas_ms"], 3), benchlib.fmt(r["candidate_ms"], 3),
              benchlib.fmt(r["cublas_tflops"], 1), benchlib.fmt(r["candidate_tflops"], 1),
              benchlib.fmt(100 * r["ratio"], 1, " %") if r["ratio"] is not None else "-",
              f"{r['max_abs_err']:.3g}"] for r in rows]
    print(benchlib.markdown_table(["M x N x K", "cuBLAS ms", "candidate ms", "cuBLAS TFLOP/s",
                                   "candidate TFLOP/s", "candidate / cuBLAS", "max |diff|"],
                                  table))
    if args.json:
        benchlib.write_json(args.json, {"device": device, "torch": torch.__version__,
                                        "problem": args.problem, "candidate": args.candidate,
                                        "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
