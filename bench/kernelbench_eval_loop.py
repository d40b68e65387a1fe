#!/usr/bin/env python3
"""KernelBench's own `eval_kernel_against_ref` over many tasks in ONE warm Python process.

Run by bench/kernelbench_suite.py: the process imports torch and KernelBench's evaluator once,
then evaluates every (problem, candidate) pair of --tasks-file in order with the same arguments
bench/kernelbench_eval_one.py passes (KernelBench's script defaults: 5 correctness trials, 100
timed calls, cuda_event, fp32, seed 42). Per task it records KernelBench's verdict
(compiled, correctness), its runtime and ref runtime (ms, means), the speedup ref / runtime, the
task's wall seconds, and the peak device memory torch's allocator reserved during the task
(torch.cuda.max_memory_reserved after torch.cuda.reset_peak_memory_stats; KernelBench's own
clean-up resets the peak before it returns, so each of its resets first reads the peak, and the
task's peak is the largest reading). A task's exception is recorded and the loop goes on.

Each task's record is one JSON line, flushed as soon as the task ends, so a loop that is killed
keeps what it did. The first line is the loop's own record ({"loop": {...}}: import seconds,
layout, stand-ins); the first task's record also has `startup_s`, the seconds from the
interpreter's start to that task (interpreter, torch, KernelBench's imports).

    kernelbench_eval_loop.py --kernelbench DIR --tasks-file TASKS.json --jsonl OUT.jsonl
                             --build-dir D

TASKS.json is a list of {"task": KEY, "problem": P.py, "candidate": C.py}.
"""

import time

START = time.perf_counter()

import argparse  # noqa: E402
import gc  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernelbench_eval_one  # noqa: E402  (stand-ins, KernelBench's import, its result as JSON)


class PeakWatch:
    """The most device memory torch reserved during one task, read across KernelBench's own
    torch.cuda.reset_peak_memory_stats (its graceful_eval_cleanup calls it before returning)."""

    def __init__(self, torch):
        self.torch = torch
        self.real_reset = torch.cuda.reset_peak_memory_stats
        self.seen = 0

    def _read(self, device=None):
        try:
            self.seen = max(self.seen, self.torch.cuda.max_memory_reserved(device))
        except Exception:  # noqa: BLE001 - a broken context must not end the loop
            pass

    def install(self):
        """Every reset (torch.cuda's and torch.cuda.memory's) first reads the peak so far."""
        def reset(device=None):
            self._read(device)
            return self.real_reset(device)
        self.torch.cuda.reset_peak_memory_stats = reset
        memory = getattr(self.torch.cuda, "memory", None)
        if memory is not None and hasattr(memory, "reset_peak_memory_stats"):
            memory.reset_peak_memory_stats = reset

    def start(self):
        """Before a task: the previous task's cached blocks freed, the peak reset."""
        gc.collect()
        self.torch.cuda.empty_cache()
        self.seen = 0
        self.real_reset()

    def peak(self):
        self._read()
        return self.seen


def kernelbench_kwargs(kb_eval, torch, reference_src, candidate_src, build_dir):
    """The arguments bench/kernelbench_eval_one.py passes, less those this version lacks."""
    kwargs = dict(original_model_src=reference_src, custom_model_src=candidate_src,
                  seed_num=42, num_correct_trials=5, num_perf_trials=100,
                  measure_performance=True, timing_method="cuda_event", verbose=False,
                  build_dir=build_dir, device=torch.device("cuda:0"), backend="cuda",
                  precision=torch.float32)
    accepted = inspect.signature(kb_eval.eval_kernel_against_ref).parameters
    return {k: v for k, v in kwargs.items() if k in accepted}


def speedup(record):
    ref, new = record.get("ref_runtime_ms"), record.get("runtime_ms")
    if ref is None or new is None or ref <= 0 or new <= 0:  # KernelBench's "no time" is -1
        return None
    return ref / new


def evaluate(kb_eval, torch, watch, task, build_dir):
    """One task's record; never raises."""
    record = {"task": task["task"], "problem": task["problem"], "candidate": task["candidate"]}
    start = time.perf_counter()
    try:
        watch.start()
        with open(task["problem"]) as f:
            reference_src = f.read()
        with open(task["candidate"]) as f:
            candidate_src = f.read()
        kwargs = kernelbench_kwargs(kb_eval, torch, reference_src, candidate_src, build_dir)
        result = kb_eval.eval_kernel_against_ref(**kwargs)
        record.update(kernelbench_eval_one.result_to_json(result))
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - the record keeps any failure, the loop goes on
        record["error"] = f"{type(e).__name__}: {e}"
        record["traceback"] = traceback.format_exc()[-3000:]
    record["wall_s"] = time.perf_counter() - start
    record["peak_reserved_bytes"] = watch.peak()
    record["speedup"] = speedup(record)
    return record


def emit(out, record):
    out.write(json.dumps(record, default=str) + "\n")
    out.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", required=True, help="KernelBench checkout")
    parser.add_argument("--tasks-file", required=True)
    parser.add_argument("--jsonl", required=True, help="one JSON line per task, appended")
    parser.add_argument("--build-dir", required=True)
    a = parser.parse_args()
    with open(a.tasks_file) as f:
        tasks = json.load(f)
    with open(a.jsonl, "a") as out:
        loop = {"pid": os.getpid(), "tasks": len(tasks)}
        try:
            import torch  # first, so that torch's own optional imports see the real environment
            loop["stubbed"] = kernelbench_eval_one.stub_missing_modules()
            kb_eval, loop["layout"] = kernelbench_eval_one.import_kernelbench_eval(
                os.path.abspath(a.kernelbench))
            loop["torch"] = torch.__version__
            loop["gpu"] = torch.cuda.get_device_name(0)
        except Exception as e:  # noqa: BLE001 - without the evaluator no task can run
            loop["error"] = f"{type(e).__name__}: {e}"
            loop["traceback"] = traceback.format_exc()[-3000:]
        loop["import_s"] = time.perf_counter() - START
        emit(out, {"loop": loop})
        if "error" in loop:
            return 1
        watch = PeakWatch(torch)
        watch.install()
        for i, task in enumerate(tasks):
            started = time.perf_counter()
            record = evaluate(kb_eval, torch, watch, task, a.build_dir)
            if i == 0:
                record["startup_s"] = started - START
            emit(out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
