"""Long-lived workers: `python -m kernelpro_worker serve SETUP.json RESULT.json`.

The binary's WorkerSession (src/eval/worker_session.h) starts one and sends it requests as JSON
lines through a FIFO (`to_worker` in SETUP.json); each reply is one JSON line on `from_worker`:
{"id": <the request's id>, "result": {...}}. A request carries `timeout_s`: the worker's own
watchdog ends the process past it (the binary kills it too). Two roles:

  referee    never imports candidate code. Commands: probe_inputs (step_probe_inputs: can the
             problem make its inputs, before any build), reference (step_reference, then keeps the
             problem's model and timing inputs), compare (step_compare), time (times the
             reference on fresh inputs, timing.Timer), verify (rebuilds the inputs of sampled
             timed calls and compares a candidate's outputs on them with the reference's).
  candidate  runs one candidate, sandboxed. Commands: load (import and construct, once), check
             (the check trials, check_step.run_check), time (timed calls on fresh inputs; a
             sample of their outputs is saved for the referee's verify), shapes (the shape
             variants, each on a ModelNew of its own: shapes.run_variants).

Both answer `exit` and then end.
"""

import faulthandler
import json
import os
import time
import traceback

from . import check_step, compare_step, devmem, plain, programs, reference_step, shapes
from .candidate import load_candidate, patch_findings, save_outputs
from .common import StepError, as_output_list, bounded, json_safe, to_device
from .loading import EXT, classify_runtime, construct, import_torch, load_problem, read_input
from .timing import Timer, perturbed, tracer_for


class Referee:
    def __init__(self):
        self.problems = {}  # problem path -> state for timing and verify
        self.facts = {}  # problem path -> its speed-of-light facts (sol.py)

    def reference(self, request):
        self._unload_others(request["problem"])
        meta = reference_step.step_reference(request)
        self.problems.pop(request["problem"], None)  # a recomputed reference: load it again
        if meta.get("status", "ok") == "ok":
            self.problems[request["problem"]] = {"meta": meta, "request": request}
        return meta

    def _unload_others(self, problem):
        """One problem's model, timing inputs and timers on the device at a time: a suite's warm
        referee goes from task to task, and a task's 50 GiB of timing buffers must not stay into
        the next one (a problem come back to is loaded again from its cache entry)."""
        for path, state in self.problems.items():
            if path != problem and "model" in state:
                self.problems[path] = {"meta": state["meta"], "request": state["request"]}

    def _loaded(self, problem):
        state = self.problems.get(problem)
        if state is None:
            raise StepError("worker_error", f"no reference prepared for {problem} in this referee")
        if "model" not in state:
            self._unload_others(problem)
            meta, request = state["meta"], state["request"]
            device = request["device"]
            torch = import_torch(device)
            read = dict(request, inputs_dir=meta["inputs_dir"],
                        inputs_manifest=meta["inputs_manifest"],
                        inputs_recipe=meta.get("inputs_recipe"))
            init_inputs = read_input(read, "init_inputs")
            sets = [to_device(read_input(read, n), device) for n in meta["trials"]["timing"]]
            module = load_problem(problem)
            # The time to beat: a program's own kernels (its REFERENCE only gives the outputs).
            model = construct(torch, programs.baseline_class(module), init_inputs,
                              request["init_seed"], device)
            state.update(torch=torch, device=device, model=model, sets=sets, timer=None)
        return state

    def time(self, request):
        """Times the reference, or with `compiled` torch.compile of it (the --compile-baseline)."""
        state = self._loaded(request["problem"])
        torch, model = state["torch"], state["model"]
        spans = bool(request.get("spans", True))
        which = (("compiled_timer" if request.get("compiled") else "timer")
                 + ("" if spans else "_events"))
        if state.get(which) is None:
            if request.get("compiled"):
                if not hasattr(torch, "compile"):
                    return {"status": "unavailable",
                            "message": f"torch {torch.__version__} has no torch.compile"}
                model = torch.compile(model)
            state[which] = Timer(torch, state["device"], model, state["sets"],
                                 request.get("flush_bytes", -1), request.get("perturb", True),
                                 spans, nvml_library=request.get("nvml_library"))
        timer = state[which]
        warm = timer.warm_up(request.get("warmup_s", 0.0), request.get("warmup_calls", 1))
        block = timer.block(request["calls"])
        return {"status": "ok", "message": "", "warmup_calls": warm, **block}

    def speed_of_light(self, request):
        """The work and machine facts of the problem's speed of light (sol.py), computed once per
        problem and kept: every candidate of it is judged against the same bound."""
        from . import sol

        torch = import_torch(request.get("device", "cpu"))
        cached = self.facts.get(request["problem"])
        if cached is None:
            cached = sol.speed_of_light_facts(torch, request)
            self.facts[request["problem"]] = cached
        elif request.get("recalibrate") and "calibration" in cached:
            # Before a time is called impossible: the machine measured again, at its best.
            cached["calibration"] = sol.best_of(
                cached["calibration"],
                sol.calibrate_cpu(torch, cached["analysis"].get("input_bytes")))
        return cached

    def verify(self, request):
        """Compares the candidate's kept outputs of sampled timed calls with the reference's on
        the very same inputs, rebuilt here from (set, seed)."""
        state = self._loaded(request["problem"])
        torch, model, meta = state["torch"], state["model"], state["meta"]
        rows, first_failure = [], ""
        for sample in request["samples"]:
            label = f"timed call {sample['index']}"
            row = {"trial": label,
                   "expected": f"timing_{sample['set']} scaled by seed {sample['seed']}",
                   "passed": False}
            rows.append(row)
            try:
                name = str(sample["file"])
                if os.path.basename(name) != name or not name.startswith("timed_"):
                    raise ValueError(f"{name!r} is not a kept output's name")
                set_index = int(sample["set"])
                # Into the timer's own buffers where it has them (no timed call runs meanwhile):
                # no second copy of inputs that may be gigabytes.
                timer = state.get("timer") or state.get("timer_events")
                inputs = perturbed(torch, state["sets"][set_index], int(sample["seed"]),
                                   into=timer.buffers[set_index] if timer is not None else None)
                with torch.no_grad():
                    want = as_output_list(model(*inputs))  # compared where it is
                actual = plain.load(os.path.join(request["actual_dir"], name))
            except (OSError, plain.PlainError, IndexError, ValueError, KeyError) as e:
                row["reason"] = f"the kept output cannot be read: {e}"
                actual = None
            if actual is not None:
                row.update(compare_step.compare_recorded(torch, actual, want, request["atol"],
                                                         request["rtol"], meta.get("vacuous"),
                                                         request["vacuous_rel_tol"]))
            if not row["passed"] and not first_failure:
                first_failure = f"{label}: {row.get('reason', 'mismatch')}"
        return {"status": "ok", "passed": not first_failure, "message": first_failure,
                "trials": rows}

    COMMANDS = {"reference": reference, "compare": lambda self, r: compare_step.step_compare(r),
                "probe_inputs": lambda self, r: reference_step.step_probe_inputs(r),
                "time": time, "verify": verify, "speed_of_light": speed_of_light}


class CandidateHost:
    def __init__(self):
        self.loaded = None
        self.timers = {}            # device records asked for (bool) -> Timer
        self.reference_timers = {}  # the reference in this process: the between-process spread

    def load(self, request):
        self.loaded, failure = load_candidate(request)
        if failure is not None:
            return failure
        return {"status": "ok", "message": "", "extensions": self.loaded.cache.extensions}

    def _need(self):
        if self.loaded is None:
            raise StepError("worker_error", "the candidate was not loaded")
        return self.loaded

    def check(self, request):
        return check_step.run_check(self._need(), request)

    def time(self, request):
        loaded = self._need()
        torch, model = loaded.torch, loaded.model
        save, clone, to_host = loaded.save, loaded.clone, loaded.to_host
        out_dir = request["out_dir"]
        os.makedirs(out_dir, exist_ok=True)
        samples = []

        def keep(index, set_index, seed, out):
            snapshot = []
            for t in as_output_list(out, strict=True):
                # Straight to the host (no second copy on the device); a copy of its own where
                # the output already was there.
                host = to_host(t)
                snapshot.append(clone(host) if host is t else host)
            name = f"timed_{index}{EXT}"
            save_outputs(save, os.path.join(out_dir, name), snapshot)
            samples.append({"index": index, "set": set_index, "seed": seed, "file": name})

        try:
            spans = bool(request.get("spans", True))
            if spans not in self.timers:
                sets = [to_device(read_input(request, n), loaded.device)
                        for n in request["reference"]["trials"]["timing"]]
                self.timers[spans] = Timer(torch, loaded.device, model, sets,
                                           request.get("flush_bytes", -1),
                                           request.get("perturb", True), spans,
                                           nvml_library=request.get("nvml_library"))
            timer = self.timers[spans]
            warm = timer.warm_up(request.get("warmup_s", 0.0), request.get("warmup_calls", 1))
            block = timer.block(request["calls"], request.get("sample_p", 0.0), keep)
        except StepError as e:
            return {"status": e.status, "message": e.message, "findings": []}
        except Exception as e:  # noqa: BLE001 - the candidate failed while being timed
            status, message = classify_runtime(e)
            return {"status": status, "message": message, "findings": []}
        findings = patch_findings(loaded, "while being timed")
        rebound = timer.rebound()
        if rebound:
            findings.append({"rule": "patching", "severity": "fail", "line": 0,
                             "message": "candidate rebound the harness's timer ("
                             + ", ".join(rebound) + ") while being timed"})
        result = {"status": "ok", "message": "", "warmup_calls": warm, "samples": samples,
                  "findings": findings, **block}
        if request.get("problem") and programs.is_cuda_program(request["problem"]):
            # A .cu program is built by the referee; the candidate's sandbox cannot build it again.
            result["reference_note"] = ("the CUDA program is timed in the referee's process only "
                                        "(its build is not available in the candidate's sandbox)")
        elif request.get("problem"):
            # The reference, timed here too: never a verdict (this process is the candidate's),
            # only how much this process's timings differ from the referee's.
            try:
                result["reference_times_ms"] = self._time_reference(request, timer)
            except Exception as e:  # noqa: BLE001 - the spread is then unknown, and said so
                result["reference_note"] = ("the reference could not be timed here: "
                                            f"{type(e).__name__}: {e}")
        return result

    def _time_reference(self, request, timer):
        loaded = self.loaded
        torch = loaded.torch
        spans = timer.tracer is not None
        if spans not in self.reference_timers:
            model = construct(torch, programs.baseline_class(load_problem(request["problem"])),
                              loaded.init_inputs, request["init_seed"], loaded.device)
            self.reference_timers[spans] = Timer(torch, loaded.device, model, timer.base_sets,
                                                 request.get("flush_bytes", -1),
                                                 request.get("perturb", True), spans,
                                                 buffers=timer.buffers,
                                                 nvml_library=request.get("nvml_library"))
        reference_timer = self.reference_timers[spans]
        # The device ran the candidate's block just now: a short warm-up suffices.
        reference_timer.warm_up(min(request.get("warmup_s", 0.0), 0.1),
                                request.get("warmup_calls", 1))
        # Half as many calls: a median for the spread, at half the cost.
        return reference_timer.block(max(1, (request["calls"] + 1) // 2))["times_ms"]

    def shapes(self, request):
        return shapes.run_variants(self._need(), request)

    COMMANDS = {"load": load, "check": check, "time": time, "shapes": shapes}


def _prepare(role, prepare):
    """What a worker does before its first request, while the binary is busy elsewhere (the
    reference step, the builds, another candidate's steps).

    A candidate's process opens and closes the operator trace once on a CPU tensor: the first use
    of torch's dispatch modes imports parts of torch lazily (seconds on torch 2.x), and this way
    that happens here, before any candidate code and before the patch guard takes its snapshot;
    it also imports torch.utils.cpp_extension and asks the compilers for their versions (the
    build cache's key), as every load of a load_inline candidate does.
    With {"device": "cuda", "start_device": true} either role also starts CUDA (the context, the
    architecture list) and starts the profiler once (timing.SpanTracer: CUPTI's first start and
    the calibration of the markers): the binary asks for that only where no timing runs on the
    device meanwhile. A
    failure here is left to the first request that needs the device, which says why."""
    import torch

    if role == "candidate":
        from . import buildcache, optrace

        with optrace.OpTrace():
            torch.ones(2).add(1)
        try:  # torch.utils.cpp_extension imported, the compilers' versions asked once
            buildcache.toolchain_fingerprint(prepare.get("device") == "cuda")
        except Exception:  # noqa: BLE001 - the load asks again and reports
            pass
    if prepare.get("device") == "cuda" and prepare.get("start_device"):
        try:
            import_torch("cuda")
            torch.zeros(1, device="cuda")
            torch.cuda.synchronize()
            tracer_for(torch)  # CUPTI started and the markers found now, not in the first block
        except Exception:  # noqa: BLE001 - reported by the first request that needs the device
            pass


def _with_memory(result, used, role, command):
    """The request's device memory (devmem.py) into its reply; an out-of-memory failure's
    message made one line that names the process and the step."""
    if not isinstance(result, dict):
        return
    if used is not None:
        result["device_memory"] = used
    line = devmem.oom_line(str(result.get("message", "")), role, command, used)
    if line and result.get("status") not in (None, "ok"):
        result["message"] = line
        if result["status"] == "worker_error":
            result["status"] = "runtime_error"


# Requests after which a worker keeps the device memory its allocator cached: a side's timing
# blocks come back to back and must find their memory as the last block left it. After any other
# request the cache is handed back to the device, so that one process's check or comparison does
# not hold memory while the other process works (issue 42: a referee kept 59 GiB cached).
KEEP_MEMORY = ("time",)


def serve(setup):
    role = setup["role"]
    # torch now, before the first request: a worker started ahead of its turn has it imported by
    # then. Importing torch touches no GPU; CUDA starts with the first request that needs it,
    # unless the binary asked for it now (setup "prepare").
    import torch  # noqa: F401

    _prepare(role, setup.get("prepare") or {})
    host = {"referee": Referee, "candidate": CandidateHost}[role]()
    commands = type(host).COMMANDS
    # Bound before any candidate code runs; the channel itself is no secret (a candidate in this
    # process could write to it: README, "What the harness does not stop").
    dumps, loads = json.dumps, json.loads
    memory = devmem.StepMemory(torch)
    with open(setup["to_worker"], "rb") as requests, \
            open(setup["from_worker"], "wb", buffering=0) as replies:
        for line in requests:
            try:
                message = loads(line)
                command, request = message["command"], message["request"]
                ident = message["id"]
            except (ValueError, KeyError, TypeError) as e:
                print(f"kernelpro_worker serve: unreadable request: {e}", flush=True)
                return
            timeout = float(message.get("timeout_s") or 0)
            if timeout > 0:
                faulthandler.dump_traceback_later(timeout + 1, exit=True)
            if command == "exit":
                result = {"status": "ok", "message": ""}
            elif command not in commands:
                result = {"status": "worker_error",
                          "message": f"unknown command '{command}' for {role}"}
            else:
                memory.begin()
                started = time.perf_counter()
                try:
                    result = commands[command](host, request)
                except StepError as e:
                    result = {"status": e.status, "message": e.message}
                except BaseException as e:  # noqa: BLE001 - report, never die without a reply
                    result = {"status": "worker_error", "message": f"{type(e).__name__}: {e}\n"
                              + bounded(traceback.format_exc(), 4000)}
                _with_memory(result, memory.end(), role, command)
                if command not in KEEP_MEMORY:
                    memory.release()
                if isinstance(result, dict):
                    result["seconds"] = time.perf_counter() - started
            faulthandler.cancel_dump_traceback_later()
            try:
                text = dumps({"id": ident, "result": json_safe(result)}, allow_nan=False)
            except (TypeError, ValueError) as e:
                text = dumps({"id": ident, "result": {
                    "status": "worker_error", "message": f"the {command} reply is not JSON: {e}"}})
            replies.write(text.encode("utf-8") + b"\n")
            if command == "exit":
                return
