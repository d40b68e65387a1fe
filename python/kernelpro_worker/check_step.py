"""The `check` step: runs the candidate on every check trial's inputs and saves what it returns
for the compare step, which runs in another process; on the way it looks for what a user would
call cheating (inputs modified in place, outputs aliasing inputs, work left running after
forward returned, a result cache keyed on the input buffers, patched harness functions, and the
torch operators the policy forbids)."""

import os

from . import optrace
from .candidate import load_candidate, patch_findings, save_outputs
from .common import StepError, as_output_list, to_device
from .loading import EXT, classify_runtime, read_input, sync


def step_check(request):
    """Runs the candidate on the trials' inputs and saves its outputs for step_compare.

    The request names the inputs tree (`inputs_dir`, checked against `inputs_manifest`) and
    carries the reference's metadata inline (`reference`: trials, outputs, output_aliases_input,
    reference_ops); the forward calls run under an operator trace for the torch-operator policy
    (`torch_ops_policy`, `allowed_ops`)."""
    loaded, failure = load_candidate(request)
    if failure is not None:
        return failure
    return run_check(loaded, request)


def run_check(loaded, request):
    """The check trials on a loaded candidate (step_check without the import)."""
    from . import tensors

    torch, device, model, trace = loaded.torch, loaded.device, loaded.model, loaded.trace
    save, equal, clone = loaded.save, loaded.equal, loaded.clone
    ref = request["reference"]
    out_dir = request["out_dir"]
    os.makedirs(out_dir, exist_ok=True)
    findings = []
    try:
        checks = ref["trials"]["check"]
        refill = read_input(request, checks[1]) if len(checks) >= 2 else None
    except StepError as e:
        return {"status": e.status, "message": e.message, "findings": findings}
    result = {"status": "ok", "message": "", "findings": findings,
              "extensions": loaded.cache.extensions, "outputs": []}

    def call(inputs):
        tensors.poison_allocator(ref["outputs"], device)
        loaded.calls += 1
        with torch.no_grad():
            with trace:
                raw = model(*inputs)
            out = as_output_list(raw, strict=True)
        # What the caller's stream sees at return: that is the candidate's result.
        if device == "cuda":
            torch.cuda.current_stream().synchronize()
        taken = [clone(t) for t in out]
        # What each output's bits were here, computed on the device: after the device is idle
        # they must be the same (nothing left running wrote them).
        marks = [tensors.fingerprint([t]) for t in taken]
        snapshot = [t.cpu() for t in taken]
        del taken
        sync(torch, device)
        return out, snapshot, marks

    kept_inputs = None
    try:
        for name in request["trials"]:
            inputs = to_device(read_input(request, name), device)
            pristine = [clone(x) if isinstance(x, torch.Tensor) else x for x in inputs]
            out, snapshot, marks = call(inputs)
            _check_side_effects(torch, tensors, name, inputs, pristine, out, marks, ref,
                                findings, equal)
            save_outputs(save, os.path.join(out_dir, name + EXT), snapshot)
            result["outputs"].append([name, name])
            if kept_inputs is None:
                kept_inputs = inputs
            del out
        # Same buffers, new values: a result cache keyed on the input tensors must not survive it.
        if kept_inputs is not None and refill is not None:
            for dst, src in zip(kept_inputs, refill):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src.to(dst.device))
            out, snapshot, _ = call(kept_inputs)
            save_outputs(save, os.path.join(out_dir, "refill" + EXT), snapshot)
            result["outputs"].append(["refill", checks[1]])
    except StepError as e:
        return dict(result, status=e.status, message=e.message)
    except Exception as e:  # noqa: BLE001 - the candidate failed while running
        status, message = classify_runtime(e)
        return dict(result, status=status, message=message)
    findings.extend(patch_findings(loaded, "while running"))
    result["torch_ops"] = sorted(trace.ops)
    findings.extend(optrace.reference_op_findings(trace.ops, ref.get("reference_ops") or [],
                                                  request.get("torch_ops_policy", "forbid"),
                                                  request.get("allowed_ops", [])))
    return result


def _check_side_effects(torch, tensors, name, inputs, pristine, out, marks, ref, findings,
                        equal):
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
    for j, (o, mark) in enumerate(zip(out, marks)):
        if tensors.fingerprint([o]) != mark:
            fail("side_stream", f"output {j} changed after forward returned (trial {name}): "
                 "work was still running on another stream or thread")

