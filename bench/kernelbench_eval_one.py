#!/usr/bin/env python3
"""Evaluates one (reference, candidate) pair with KernelBench's own `eval_kernel_against_ref`.

Run by bench/kernelbench_side_by_side.py as a plain subprocess, so its wall time is what a
KernelBench user waits for: interpreter start, `import torch`, KernelBench's imports, CUDA
initialisation, the load_inline build, correctness and timing. KernelBench's own script defaults
(scripts/run_and_check.py): 5 correctness trials, 100 timed calls, cuda_event timing, fp32.

    kernelbench_eval_one.py --kernelbench DIR --problem P.py --candidate C.py --build-dir D
                            --json-out F.json [--import-only]

KernelBench's utils module imports LLM clients (openai, litellm, dotenv, ...) that an
evaluation never calls. Those that are not installed are replaced by empty stand-ins (named in
the output as `stubbed`), which can only make KernelBench's start faster, never slower.
"""

import time

START = time.perf_counter()

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402

# Modules KernelBench imports for dataset download and LLM queries, not for evaluating.
OPTIONAL_MODULES = ["dotenv", "openai", "litellm", "tqdm", "requests", "datasets", "modal",
                    "pydra", "together", "anthropic", "tabulate", "pydantic"]


class _Anything:
    """Stands in for any attribute of a module that is not installed."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getattr__(self, name):
        return _Anything()


class _BaseModel:
    """Enough of pydantic.BaseModel for KernelExecResult: class defaults, keyword overrides."""

    def __init__(self, **kwargs):
        import copy
        for klass in reversed(type(self).__mro__):
            for key in getattr(klass, "__annotations__", {}):
                if hasattr(klass, key):
                    setattr(self, key, copy.deepcopy(getattr(klass, key)))
        for key, value in kwargs.items():
            setattr(self, key, value)


def _module_getattr(attr):
    if attr.startswith("__"):  # __path__, __spec__, ...: a plain module, not a package
        raise AttributeError(attr)
    return _Anything()


def stub_missing_modules():
    """Installs stand-ins for the optional modules that are not installed; returns their names."""
    stubbed = []
    for name in OPTIONAL_MODULES:
        if importlib.util.find_spec(name) is not None:
            continue
        module = types.ModuleType(name)
        if name == "pydantic":
            module.BaseModel = _BaseModel
        else:
            module.__getattr__ = _module_getattr
        sys.modules[name] = module
        stubbed.append(name)
    return stubbed


def import_kernelbench_eval(checkout):
    """KernelBench's eval module: `src/kernelbench/eval.py` (0.2 and later) or `src/eval.py`."""
    if os.path.exists(os.path.join(checkout, "src", "kernelbench", "eval.py")):
        sys.path.insert(0, os.path.join(checkout, "src"))
        import kernelbench.eval as kb_eval
        return kb_eval, "src/kernelbench"
    if os.path.exists(os.path.join(checkout, "src", "eval.py")):
        sys.path.insert(0, checkout)
        from src import eval as kb_eval
        return kb_eval, "src"
    raise FileNotFoundError(f"no src/kernelbench/eval.py or src/eval.py under {checkout}")


def result_to_json(result):
    if result is None:  # KernelBench's answer to a build lock clash: "please retry"
        return {"error": "eval_kernel_against_ref returned None (build lock error)"}
    fields = ("compiled", "correctness", "runtime", "runtime_stats", "ref_runtime",
              "ref_runtime_stats", "metadata")
    out = {k: getattr(result, k, None) for k in fields}
    # KernelBench reports the mean of its timed calls in ms (its comments say us; timing.py ms).
    out["runtime_ms"] = out.pop("runtime")
    out["ref_runtime_ms"] = out.pop("ref_runtime")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", required=True, help="KernelBench checkout")
    parser.add_argument("--problem", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--json-out", required=True)
    parser.add_argument("--correct-trials", type=int, default=5)
    parser.add_argument("--perf-trials", type=int, default=100)
    parser.add_argument("--import-only", action="store_true",
                        help="import KernelBench and stop (checks the set-up without a GPU)")
    a = parser.parse_args()

    report = {}
    try:
        import torch  # first, so that torch's own optional imports see the real environment
        report["stubbed"] = stub_missing_modules()
        kb_eval, layout = import_kernelbench_eval(os.path.abspath(a.kernelbench))
        report["layout"] = layout
        report["import_s"] = time.perf_counter() - START
        if not a.import_only:
            with open(a.problem) as f:
                reference_src = f.read()
            with open(a.candidate) as f:
                candidate_src = f.read()
            kwargs = dict(original_model_src=reference_src, custom_model_src=candidate_src,
                          seed_num=42, num_correct_trials=a.correct_trials,
                          num_perf_trials=a.perf_trials, measure_performance=True,
                          timing_method="cuda_event", verbose=False, build_dir=a.build_dir,
                          device=torch.device("cuda:0"), backend="cuda",
                          precision=torch.float32)
            # Older KernelBench versions lack some of these parameters.
            accepted = inspect.signature(kb_eval.eval_kernel_against_ref).parameters
            kwargs = {k: v for k, v in kwargs.items() if k in accepted}
            eval_start = time.perf_counter()
            report.update(result_to_json(kb_eval.eval_kernel_against_ref(**kwargs)))
            report["eval_s"] = time.perf_counter() - eval_start
    except Exception as e:  # noqa: BLE001 - the row records any failure
        report["error"] = f"{type(e).__name__}: {e}"
        report["traceback"] = traceback.format_exc()[-3000:]
    report["process_s"] = time.perf_counter() - START
    with open(a.json_out, "w") as f:
        json.dump(report, f, indent=2, default=str)
    return 1 if "error" in report else 0


if __name__ == "__main__":
    sys.exit(main())
