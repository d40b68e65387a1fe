"""The worker's steps. Each takes the request dict and returns the result dict.

A step never lets a candidate's failure escape as an exception: the failure is classified
(compile_error, runtime_error, ...) and returned. Reference outputs are computed, and outputs
compared, only in processes that never import the candidate.
"""

import copy
import json
import os
import shutil
import sys
import time
import traceback

from . import scan as scan_mod
from .common import (StepError, as_output_list, bounded, load_module, load_problem, read_json,
                     sha256_file, sha256_text, to_device, write_json)

REFERENCE_LAYOUT = 2  # bump when the reference directory's contents change


# ----------------------------------------------------------------------------------------------
# Process set-up


def _import_torch(device):
    import torch

    if device == "cuda":
        if not torch.cuda.is_available():
            raise StepError("device_error", "device 'cuda' requested but torch.cuda.is_available() is "
                            "False (no GPU or no CUDA build of torch); use --device cpu")
        torch.cuda.init()
        if "TORCH_CUDA_ARCH_LIST" not in os.environ:
            major, minor = torch.cuda.get_device_capability()
            # Hopper and newer: build for the architecture-specific target (sm_90a, sm_100a) so
            # candidates may use warpgroup MMA, TMA multicast and the like; the binary only has to
            # run on this device.
            suffix = "a" if major >= 9 else ""
            os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}{suffix}"
    return torch


def _sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def _tensor_meta(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype)}


def _save(torch, tensors, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save([t.detach().cpu() if hasattr(t, "detach") else t for t in tensors], path)


def _load_candidate(request, torch, guard_holder, cache=None):
    """Imports the candidate with the build cache installed. Returns (module, build cache).
    A caller that passes its own `cache` still sees what was built when the import fails."""
    from .buildcache import BuildCache
    from .guard import PatchGuard

    cache = cache or BuildCache(request["cache_dir"])
    cache.install()
    guard_holder.append(PatchGuard())
    path = request["candidate"]
    try:
        module = load_module(path, "kp_candidate")
    except StepError:
        raise
    except SyntaxError as e:
        raise StepError("compile_error", f"candidate has a Python syntax error at line {e.lineno}: {e.msg}")
    except Exception as e:  # noqa: BLE001 - anything the candidate raises at import
        raise StepError("runtime_error", f"candidate failed at import: {type(e).__name__}: {e}\n"
                        + bounded(traceback.format_exc(), 4000))
    if not hasattr(module, "ModelNew"):
        raise StepError("compile_error", "candidate does not define class ModelNew")
    return module, cache


def _construct(torch, cls, init_inputs, seed, device):
    torch.manual_seed(seed)
    model = cls(*init_inputs)
    return model.to(device) if hasattr(model, "to") else model


def _classify_runtime(e):
    text = f"{type(e).__name__}: {e}"
    low = text.lower()
    if "out of memory" in low or "can't allocate memory" in low or "cannot allocate memory" in low:
        return "runtime_error", "out of memory: " + bounded(text, 1500)
    if "illegal memory access" in low or "misaligned address" in low or "illegal instruction" in low:
        return "runtime_error", "CUDA fault: " + bounded(text, 1500)
    return "runtime_error", bounded(text, 3000)


# ----------------------------------------------------------------------------------------------
# scan


def step_scan(request):
    with open(request["problem"]) as f:
        problem = scan_mod.scan_problem(f.read(), request["problem"])
    result = {"problem": problem}
    if not problem["ok"]:
        return result
    if request.get("candidate"):
        with open(request["candidate"]) as f:
            result["candidate"] = scan_mod.scan_candidate(
                f.read(), set(problem["reference_ops"]), request.get("torch_ops_policy", "forbid"),
                request.get("allowed_ops", []), request.get("fp32_problem", True),
                request["candidate"])
    return result


# ----------------------------------------------------------------------------------------------
# inspect


def step_inspect(request):
    import torch
    from torch.utils import cpp_extension

    info = {
        "python": sys.executable,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "include_paths": cpp_extension.include_paths(),
        "library_paths": cpp_extension.library_paths(),
        "cuda_available": torch.cuda.is_available(),
    }
    device = request.get("device", "cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda":
        _import_torch("cuda")
        p = torch.cuda.get_device_properties(0)
        info.update(gpu_name=p.name, compute_capability=[p.major, p.minor],
                    sm_count=p.multi_processor_count, memory_bytes=p.total_memory,
                    l2_bytes=getattr(p, "L2_cache_size", None), device_count=torch.cuda.device_count(),
                    driver=_driver_version())
    else:
        info.update(gpu_name=None, cpu_count=os.cpu_count())
    result = {"device": device, "info": info}
    if request.get("problem"):
        result["reference"] = _reference_cost(torch, load_problem(request["problem"]), device,
                                              request.get("init_seed", 42), request.get("seed", 1))
    return result


def _driver_version():
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except Exception:  # noqa: BLE001
        return None


def _reference_cost(torch, problem, device, init_seed, seed):
    """FLOPs (where torch can count them) and the fewest bytes the reference must move."""
    from .tensors import generate_inputs

    torch.manual_seed(init_seed)
    init_inputs = problem.get_init_inputs()
    model = _construct(torch, problem.Model, init_inputs, init_seed, device)
    inputs = to_device(generate_inputs(problem, seed), device)
    cost = {"flops": None, "flops_note": ""}
    try:
        from torch.utils.flop_counter import FlopCounterMode

        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            outputs = as_output_list(model(*inputs))
        cost["flops"] = int(counter.get_total_flops())
        cost["flops_note"] = "torch.utils.flop_counter (matmul, convolution and attention only)"
    except ImportError:
        with torch.no_grad():
            outputs = as_output_list(model(*inputs))
        cost["flops_note"] = f"torch {torch.__version__} cannot count FLOPs"
    nbytes = lambda ts: sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor))
    params = list(model.parameters()) + list(model.buffers()) if hasattr(model, "parameters") else []
    cost["input_bytes"] = nbytes(inputs)
    cost["output_bytes"] = nbytes(outputs)
    cost["parameter_bytes"] = nbytes(params)
    cost["min_bytes"] = cost["input_bytes"] + cost["output_bytes"] + cost["parameter_bytes"]
    return cost


# ----------------------------------------------------------------------------------------------
# analyze (Stage 1)


def step_analyze(request):
    """Runs the reference Model once and reports its operations, FLOPs and minimum bytes
    (analyze.py says how each is counted), with the device name torch reports on cuda."""
    from . import analyze as analyze_mod
    from .tensors import generate_inputs

    device = request.get("device", "cpu")
    torch = _import_torch(device)
    problem = load_problem(request["problem"])
    init_seed = request.get("init_seed", 42)
    torch.manual_seed(init_seed)
    try:
        init_inputs = problem.get_init_inputs()
        model = _construct(torch, problem.Model, init_inputs, init_seed, device)
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error", f"Model(*get_init_inputs()) failed: {type(e).__name__}: {e}")
    try:
        inputs = to_device(generate_inputs(problem, request.get("seed", 1)), device)
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")
    # Shapes and dtypes are all the analysis needs: on cpu the call runs on meta tensors first
    # (no arithmetic, instant even for large GEMMs) and falls back to a real call when the
    # reference does something meta tensors cannot (data-dependent code, tensors made in forward).
    result = None
    fallback_note = None
    if request.get("meta", device == "cpu"):
        try:
            result = analyze_mod.analyze(torch, problem, copy.deepcopy(model).to("meta"),
                                         to_device(inputs, "meta"), "meta")
            result["executed_on"] = "meta"
        except Exception as e:  # noqa: BLE001
            fallback_note = f"meta-tensor run failed ({type(e).__name__}); ran the reference for real"
    if result is None:
        try:
            result = analyze_mod.analyze(torch, problem, model, inputs, device)
        except StepError:
            raise
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"the reference forward failed: {type(e).__name__}: {e}")
        result["executed_on"] = device
        if fallback_note:
            result["flops_notes"].append(fallback_note)
    result.update(status="ok", device=device, torch_version=torch.__version__, device_name=None)
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        result.update(device_name=p.name, compute_capability=[p.major, p.minor],
                      sm_count=p.multi_processor_count)
    return result


# ----------------------------------------------------------------------------------------------
# reference


def _reference_key(request, torch):
    device_name = torch.cuda.get_device_name(0) if request["device"] == "cuda" else "cpu"
    fields = {k: request.get(k) for k in ("device", "init_seed", "check_seeds", "extra_seeds",
                                          "timing_seeds", "fp64_trials")}
    return sha256_text(sha256_file(request["problem"]), json.dumps(fields, sort_keys=True),
                       device_name, torch.__version__, str(REFERENCE_LAYOUT))[:24]


def step_reference(request):
    """Computes (or finds cached) inputs and reference outputs for every trial of a problem."""
    device = request["device"]
    torch = _import_torch(device)
    from . import tensors

    key = _reference_key(request, torch)
    ref_dir = os.path.join(request["cache_dir"], "references", key)
    meta_path = os.path.join(ref_dir, "meta.json")
    if os.path.exists(meta_path):
        meta = read_json(meta_path)
        meta["cached"] = True
        return meta

    problem = load_problem(request["problem"])
    atol, rtol = request["atol"], request["rtol"]
    init_seed = request["init_seed"]
    tmp_dir = ref_dir + f".tmp{os.getpid()}"
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(tmp_dir)
    try:
        torch.manual_seed(init_seed)
        init_inputs = problem.get_init_inputs()
        torch.save(list(init_inputs), os.path.join(tmp_dir, "init_inputs.pt"))
        try:
            model = _construct(torch, problem.Model, init_inputs, init_seed, device)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"Model(*get_init_inputs()) failed: {type(e).__name__}: {e}")

        def run(inputs):
            with torch.no_grad():
                out = as_output_list(model(*inputs))
            _sync(torch, device)
            return out

        notes = []
        trials = {"check": [], "extra": [], "timing": []}
        metas = None
        fp32 = None
        fp64_model = None
        fp64_errors = []
        aliases = []
        started = time.monotonic()
        for kind, seeds in (("check", request["check_seeds"]), ("extra", request["extra_seeds"]),
                            ("timing", request["timing_seeds"])):
            for i, seed in enumerate(seeds):
                name = f"{kind}_{i}"
                try:
                    base = tensors.generate_inputs(problem, seed)
                except Exception as e:  # noqa: BLE001
                    raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")
                inputs = to_device(base, device)
                if kind == "extra":
                    inputs, note = _extra_inputs(torch, tensors, run, inputs, seed)
                    if inputs is None:
                        notes.append(note)
                        continue
                    if note:
                        notes.append(note)
                try:
                    outputs = run(inputs)
                except Exception as e:  # noqa: BLE001
                    raise StepError("problem_error", f"the reference forward failed: {type(e).__name__}: {e}")
                if metas is None:
                    metas = [_tensor_meta(t) for t in outputs]
                    fp32 = all(t.dtype == torch.float32 for t in outputs if t.is_floating_point()) and \
                        any(t.is_floating_point() for t in outputs)
                    aliases = [any(isinstance(x, torch.Tensor) and tensors.overlaps(o, x) for x in inputs)
                               for o in outputs]
                    again = run(inputs)
                    for a, b in zip(outputs, again):
                        cmp = tensors.compare_output(b, a, atol, rtol)
                        if not cmp["passed"]:
                            raise StepError("problem_error", "the reference is nondeterministic: two "
                                            "runs on the same inputs differ (" + cmp["reason"] + "). "
                                            "Dropout or batch norm in training mode, or random numbers "
                                            "inside forward, make every candidate unverifiable; make "
                                            "the reference deterministic (e.g. call .eval()).")
                        if not torch.equal(a, b):
                            notes.append("the reference is not bitwise deterministic (differences within tolerance)")
                _save(torch, inputs, os.path.join(tmp_dir, "inputs", name + ".pt"))
                _save(torch, outputs, os.path.join(tmp_dir, "expected", name + ".pt"))
                trials[kind].append(name)
                if fp32 and kind == "check" and i < request.get("fp64_trials", 2):
                    try:
                        if fp64_model is None:
                            fp64_model = copy.deepcopy(model).double()
                        with torch.no_grad():
                            out64 = as_output_list(fp64_model(*tensors.to_double(inputs)))
                        _save(torch, out64, os.path.join(tmp_dir, "expected64", name + ".pt"))
                        fp64_errors.append(max(tensors.relative_l2_error(o, r)
                                               for o, r in zip(outputs, out64) if o.is_floating_point()))
                    except Exception as e:  # noqa: BLE001
                        notes.append(f"fp64 reference unavailable ({type(e).__name__}: {e}); "
                                     "lowered precision cannot be detected")
                        fp32 = False
                del outputs
        vacuous = ""
        for name in trials["check"]:
            vacuous = tensors.vacuity(torch.load(os.path.join(tmp_dir, "expected", name + ".pt")), atol, rtol)
            if vacuous:
                break
        meta = {
            "status": "ok", "dir": ref_dir, "key": key, "cached": False, "trials": trials,
            "outputs": metas, "output_aliases_input": aliases, "fp32": bool(fp32),
            "fp64_trials": [n for n in trials["check"]
                            if os.path.exists(os.path.join(tmp_dir, "expected64", n + ".pt"))],
            "reference_fp64_error": max(fp64_errors) if fp64_errors else None,
            "vacuous": vacuous, "notes": sorted(set(notes)),
            "seconds": time.monotonic() - started, "device": device,
        }
        write_json(os.path.join(tmp_dir, "meta.json"), meta)
        if os.path.exists(ref_dir):  # another process finished first: keep theirs
            shutil.rmtree(tmp_dir, ignore_errors=True)
        else:
            os.replace(tmp_dir, ref_dir)
        return meta
    except BaseException:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        raise


def _extra_inputs(torch, tensors, run, inputs, seed):
    """Signed, mixed-scale variants of the problem's inputs; falls back when the reference turns
    non-finite on them (e.g. log of negative numbers)."""
    for signs, scales, note in ((True, True, ""),
                                (False, True, "extra trials use positive mixed-scale inputs: the "
                                              "reference is not finite on signed inputs"),
                                (True, False, "extra trials use signed unit-scale inputs")):
        candidate = tensors.signed_mixed_scale(inputs, seed, signs=signs, scales=scales)
        try:
            if tensors.all_finite(run(candidate)):
                return candidate, note
        except Exception:  # noqa: BLE001 - the reference rejects these inputs; try the next kind
            pass
    return None, "extra trials skipped: the reference is not finite on perturbed inputs"


# ----------------------------------------------------------------------------------------------
# build


def step_build(request):
    torch = _import_torch(request["device"])
    from .buildcache import BuildCache

    cache = BuildCache(request["cache_dir"])
    started = time.monotonic()
    try:
        _load_candidate(request, torch, [], cache)
    except StepError as e:
        # The failed extension's record carries the compiler diagnostics for the debug prompt.
        return {"status": e.status, "message": e.message, "extensions": cache.extensions,
                "seconds": time.monotonic() - started}
    return {"status": "ok", "message": "", "extensions": cache.extensions,
            "seconds": time.monotonic() - started}


# ----------------------------------------------------------------------------------------------
# check: run the candidate on every trial's inputs, save what it returns


def step_check(request):
    device = request["device"]
    torch = _import_torch(device)
    from . import tensors

    ref = read_json(os.path.join(request["reference_dir"], "meta.json"))
    out_dir = request["out_dir"]
    os.makedirs(out_dir, exist_ok=True)
    # Everything the harness calls is bound now, before the candidate can rebind anything.
    save, load, equal, clone = torch.save, torch.load, torch.equal, torch.Tensor.clone
    guard = []
    findings = []
    try:
        module, cache = _load_candidate(request, torch, guard)
    except StepError as e:
        return {"status": e.status, "message": e.message, "findings": findings}
    result = {"status": "ok", "message": "", "findings": findings, "extensions": cache.extensions,
              "outputs": []}
    init_inputs = load(os.path.join(request["reference_dir"], "init_inputs.pt"))
    try:
        model = _construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return dict(result, status=status, message="ModelNew(*get_init_inputs()) failed: " + message)

    def call(inputs):
        tensors.poison_allocator(ref["outputs"], device)
        with torch.no_grad():
            out = as_output_list(model(*inputs))
        # What the caller's stream sees at return: that is the candidate's result.
        if device == "cuda":
            torch.cuda.current_stream().synchronize()
        snapshot = [clone(t).cpu() for t in out]
        _sync(torch, device)
        return out, snapshot

    kept_inputs = None
    try:
        for name in request["trials"]:
            inputs = load(os.path.join(request["reference_dir"], "inputs", name + ".pt"))
            inputs = to_device(inputs, device)
            pristine = [clone(x) if isinstance(x, torch.Tensor) else x for x in inputs]
            out, snapshot = call(inputs)
            _check_side_effects(torch, tensors, name, inputs, pristine, out, snapshot, ref, findings, equal)
            save(snapshot, os.path.join(out_dir, name + ".pt"))
            result["outputs"].append([name, name])
            if kept_inputs is None:
                kept_inputs = inputs
            del out
        # Same buffers, new values: a result cache keyed on the input tensors must not survive it.
        checks = ref["trials"]["check"]
        if kept_inputs is not None and len(checks) >= 2:
            fresh = load(os.path.join(request["reference_dir"], "inputs", checks[1] + ".pt"))
            for dst, src in zip(kept_inputs, fresh):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src.to(dst.device))
            out, snapshot = call(kept_inputs)
            save(snapshot, os.path.join(out_dir, "refill.pt"))
            result["outputs"].append(["refill", checks[1]])
    except StepError as e:
        return dict(result, status=e.status, message=e.message)
    except Exception as e:  # noqa: BLE001 - the candidate failed while running
        status, message = _classify_runtime(e)
        return dict(result, status=status, message=message)
    patched = guard[0].changed()
    if patched:
        findings.append({"rule": "patching", "severity": "fail", "line": 0,
                         "message": "candidate rebound " + ", ".join(patched) + " while running"})
    return result


def _check_side_effects(torch, tensors, name, inputs, pristine, out, snapshot, ref, findings, equal):
    def fail(rule, message):
        if not any(f["rule"] == rule for f in findings):
            findings.append({"rule": rule, "severity": "fail", "message": message, "line": 0})

    for i, (x, p) in enumerate(zip(inputs, pristine)):
        if isinstance(x, torch.Tensor) and not equal(x, p):
            fail("input_mutation", f"candidate modified input {i} in place (trial {name})")
    for j, o in enumerate(out):
        if j < len(ref["output_aliases_input"]) and ref["output_aliases_input"][j]:
            continue
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor) and tensors.overlaps(o, x):
                fail("output_alias", f"output {j} aliases input {i} (trial {name}); the reference "
                     "returns new memory")
    for j, (o, s) in enumerate(zip(out, snapshot)):
        if not tensors.same_values(o.cpu(), s):
            fail("side_stream", f"output {j} changed after forward returned (trial {name}): work was "
                 "still running on another stream or thread")


# ----------------------------------------------------------------------------------------------
# compare: runs in a process that never imports the candidate


def step_compare(request):
    import torch
    from . import tensors

    ref_dir = request["reference_dir"]
    ref = read_json(os.path.join(ref_dir, "meta.json"))
    atol, rtol = request["atol"], request["rtol"]
    rows = []
    first_failure = ""
    precision_failure = ""
    for actual_name, expected_name in request["pairs"]:
        path = os.path.join(request["actual_dir"], actual_name + ".pt")
        # "check/check_1" -> "check_1"; "timed-0/timing_2" -> "timing_2 (timed call)"
        folder, _, trial = actual_name.rpartition("/")
        label = f"{trial} (timed call)" if folder.startswith("timed") else trial
        row = {"trial": label, "expected": expected_name, "passed": False}
        rows.append(row)
        if not os.path.exists(path):
            row["reason"] = "no output was recorded"
            first_failure = first_failure or f"trial {label}: no output was recorded"
            continue
        actual = torch.load(path)
        expected = torch.load(os.path.join(ref_dir, "expected", expected_name + ".pt"))
        if len(actual) != len(expected):
            row["reason"] = f"{len(actual)} outputs where the reference returns {len(expected)}"
        else:
            worst = None
            for j, (a, e) in enumerate(zip(actual, expected)):
                cmp = tensors.compare_output(a, e, atol, rtol)
                if ref["vacuous"] and cmp["passed"] and a.is_floating_point():
                    err = tensors.relative_l2_error(a, e)
                    cmp["relative_l2_error"] = err
                    if err > request["vacuous_rel_tol"]:
                        cmp["passed"] = False
                        cmp["reason"] = (f"relative error {err:.3g} exceeds {request['vacuous_rel_tol']} "
                                         "(checked because the tolerance alone would accept an all-zero output)")
                if len(actual) > 1 and cmp["reason"]:
                    cmp["reason"] = f"output {j}: " + cmp["reason"]
                if worst is None or not cmp["passed"] or (cmp["max_abs_err"] or 0) > (worst["max_abs_err"] or 0):
                    if worst is None or worst["passed"]:
                        worst = cmp
            row.update(worst)
            exp64 = os.path.join(ref_dir, "expected64", expected_name + ".pt")
            if row["passed"] and ref["fp32"] and os.path.exists(exp64) and request["precision_policy"] != "off":
                out64 = torch.load(exp64)
                err = max(tensors.relative_l2_error(a, e) for a, e in zip(actual, out64) if a.is_floating_point())
                bound = max(request["precision_factor"] * (ref["reference_fp64_error"] or 0.0),
                            request["precision_bound"])
                row["fp64_relative_error"] = err
                row["fp64_bound"] = bound
                if err > bound:
                    precision_failure = precision_failure or (
                        f"lowered precision: relative error against an fp64 reference is {err:.3g}, "
                        f"above the {bound:.3g} that fp32 arithmetic stays within (the fp32 reference "
                        f"itself: {ref['reference_fp64_error']:.3g}); TF32 or half-precision math in "
                        "an fp32 problem")
        if not row["passed"] and not first_failure:
            first_failure = f"trial {label}: {row.get('reason', 'mismatch')}"
    blocking_precision = precision_failure if request["precision_policy"] == "fail" else ""
    passed = not first_failure and not blocking_precision
    message = "; ".join(m for m in (blocking_precision, first_failure) if m)
    return {"passed": passed, "message": message, "precision_warning": precision_failure,
            "trials": rows}


# ----------------------------------------------------------------------------------------------
# time


def step_time(request):
    device = request["device"]
    torch = _import_torch(device)
    ref_dir = request["reference_dir"]
    ref = read_json(os.path.join(ref_dir, "meta.json"))
    which = request["which"]
    perf = time.perf_counter
    save, load = torch.save, torch.load
    guard = []
    init_inputs = load(os.path.join(ref_dir, "init_inputs.pt"))
    try:
        if which == "candidate":
            module, _ = _load_candidate(request, torch, guard)
            model = _construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
        else:
            from .guard import PatchGuard
            guard.append(PatchGuard())
            problem = load_problem(request["problem"])
            model = _construct(torch, problem.Model, init_inputs, request["init_seed"], device)
            if which == "compiled":
                if not hasattr(torch, "compile"):
                    return {"status": "unavailable", "message": f"torch {torch.__version__} has no torch.compile"}
                model = torch.compile(model)
    except StepError as e:
        return {"status": e.status, "message": e.message}
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return {"status": status, "message": message}

    names = ref["trials"]["timing"]
    inputs = [to_device(load(os.path.join(ref_dir, "inputs", n + ".pt")), device) for n in names]
    cuda = device == "cuda"
    flush = None
    flush_bytes = int(request.get("flush_bytes", -1))
    if cuda and flush_bytes < 0:  # auto: twice the L2, so no input survives in cache between calls
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (128 << 20)
        flush_bytes = 2 * l2
    if cuda and flush_bytes > 0:
        flush = torch.empty(flush_bytes, dtype=torch.int8, device=device)
    if cuda:
        Event, synchronize = torch.cuda.Event, torch.cuda.synchronize

    def forward(args):
        with torch.no_grad():
            return model(*args)

    try:
        # Warm-up: module load, autotuning and allocator growth stay out of the numbers, and
        # the GPU has run long enough to leave its idle clocks (they ramp within ~100 ms).
        warm_start = perf()
        warmups = 0
        warmup_s = request.get("warmup_s", 0.5 if cuda else 0.05)
        while warmups < request.get("warmup_calls", 3) or perf() - warm_start < warmup_s:
            forward(inputs[warmups % len(inputs)])
            if cuda:
                synchronize()
            warmups += 1
            if warmups >= 3 and perf() - warm_start > 10 * max(warmup_s, 0.5):
                break
        times, stream_times = [], []
        last = [None] * len(inputs)
        budget, minimum = request["budget_s"], request["trials"]
        start_all = perf()
        i = 0
        while i < minimum:
            if i >= 5 and perf() - start_all > budget:
                break
            args = inputs[i % len(inputs)]
            if flush is not None:
                flush.zero_()
            if cuda:
                begin, stream_end, all_end = Event(enable_timing=True), Event(enable_timing=True), Event(enable_timing=True)
                synchronize()
                begin.record()
                out = forward(args)
                stream_end.record()
                synchronize()  # waits for every stream, so side-stream work is timed too
                all_end.record()
                all_end.synchronize()
                times.append(begin.elapsed_time(all_end))
                stream_times.append(begin.elapsed_time(stream_end))
            else:
                t0 = perf()
                out = forward(args)
                times.append((perf() - t0) * 1e3)
            last[i % len(inputs)] = out
            i += 1
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return {"status": status, "message": message}
    result = {"status": "ok", "message": "", "which": which, "times_ms": times, "warmup_calls": warmups,
              "flush_bytes": int(flush.numel()) if flush is not None else 0, "findings": []}
    if cuda:
        result["stream_times_ms"] = stream_times
    if which == "candidate" and request.get("out_dir"):
        os.makedirs(request["out_dir"], exist_ok=True)
        result["outputs"] = []
        for n, out in zip(names, last):
            if out is not None:
                save([t.detach().cpu() for t in as_output_list(out)], os.path.join(request["out_dir"], n + ".pt"))
                result["outputs"].append([n, n])
    if guard:
        patched = guard[0].changed()
        if patched:
            result["findings"].append({"rule": "patching", "severity": "fail", "line": 0,
                                       "message": "rebound " + ", ".join(patched) + " while being timed"})
    return result


# ----------------------------------------------------------------------------------------------
# run: the target process a profiler attaches to; trace: a PyTorch profiler timeline


NVTX_RANGE = "kernelpro"  # profilers select the candidate's forward by this range


def _model_and_inputs(request, torch):
    """The candidate's (or, without one, the reference's) model and the first check inputs."""
    device = request["device"]
    ref_dir = request["reference_dir"]
    ref = read_json(os.path.join(ref_dir, "meta.json"))
    init_inputs = torch.load(os.path.join(ref_dir, "init_inputs.pt"))
    if request.get("candidate"):
        module, _ = _load_candidate(request, torch, [])
        model = _construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
    else:
        model = _construct(torch, load_problem(request["problem"]).Model, init_inputs,
                           request["init_seed"], device)
    inputs = to_device(torch.load(os.path.join(ref_dir, "inputs", ref["trials"]["check"][0] + ".pt")), device)
    return model, inputs


def _profiled_calls(request, torch, model, inputs):
    """Warm-up calls outside the NVTX range, then `iterations` calls inside it: a profiler
    filtering on the range sees the forward's own kernels, not input generation or warm-up."""
    device = request["device"]
    cuda = device == "cuda"
    with torch.no_grad():
        for _ in range(request.get("warmup", 2)):
            model(*inputs)
        _sync(torch, device)
        for _ in range(request.get("iterations", 1)):
            if cuda:
                torch.cuda.nvtx.range_push(NVTX_RANGE)
            # The same name marks the call in a torch.profiler trace (a user_annotation range).
            with torch.profiler.record_function(NVTX_RANGE):
                model(*inputs)
                _sync(torch, device)
            if cuda:
                torch.cuda.nvtx.range_pop()


def step_run(request):
    torch = _import_torch(request["device"])
    try:
        model, inputs = _model_and_inputs(request, torch)
        _profiled_calls(request, torch, model, inputs)
    except StepError as e:
        return {"status": e.status, "message": e.message}
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return {"status": status, "message": message}
    return {"status": "ok", "message": "", "iterations": request.get("iterations", 1)}


def step_trace(request):
    """Records one forward call with torch.profiler (CPU and CUDA activities) as a Chrome trace."""
    device = request["device"]
    torch = _import_torch(device)
    from torch.profiler import ProfilerActivity, profile

    try:
        model, inputs = _model_and_inputs(request, torch)
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
        _profiled_calls(dict(request, iterations=0), torch, model, inputs)  # warm-up only
        # The profiler's own first step pays for starting CUPTI (milliseconds of host time before
        # the first launch): one discarded profiler warm-up step, then the recorded calls.
        iterations = request.get("iterations", 1)
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=iterations, repeat=1)
        with profile(activities=activities, schedule=schedule) as prof:
            for _ in range(1 + iterations):
                _profiled_calls(dict(request, warmup=0, iterations=1), torch, model, inputs)
                prof.step()
        prof.export_chrome_trace(request["trace_path"])
    except StepError as e:
        return {"status": e.status, "message": e.message}
    except Exception as e:  # noqa: BLE001
        status, message = _classify_runtime(e)
        return {"status": status, "message": message}
    return {"status": "ok", "message": "", "trace_path": request["trace_path"]}


STEPS = {
    "scan": step_scan,
    "inspect": step_inspect,
    "analyze": step_analyze,
    "reference": step_reference,
    "build": step_build,
    "check": step_check,
    "compare": step_compare,
    "time": step_time,
    "run": step_run,
    "trace": step_trace,
}
