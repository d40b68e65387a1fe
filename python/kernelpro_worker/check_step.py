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
    save, fingerprint, to_host = loaded.save, loaded.fingerprint, loaded.to_host
    ref = request["reference"]
    out_dir = request["out_dir"]
    os.makedirs(out_dir, exist_ok=True)
    findings = []
    checks = ref["trials"]["check"]
    # The binary may send the trials in several requests (large outputs: each batch is compared
    # and its files deleted before the next); the first trial's inputs stay for the refill, which
    # the last request asks for.
    do_refill = bool(request.get("refill", True)) and len(checks) >= 2
    if list(request["trials"][:1]) == list(checks[:1]):  # a first batch: nothing kept before
        loaded.kept_inputs = None
    result = {"status": "ok", "message": "", "findings": findings,
              "extensions": loaded.cache.extensions, "outputs": []}

    def call(inputs):
        tensors.poison_allocator(ref["outputs"], device)
        loaded.calls += 1
        with torch.no_grad():
            with trace:
                raw = model(*inputs)
            out = as_output_list(raw, strict=True)
        # What the caller's stream sees at return: that is the candidate's result. Each output's
        # bits here, computed on the device: after the device is idle they must be the same
        # (nothing left running wrote them).
        if device == "cuda":
            torch.cuda.current_stream().synchronize()
        marks = [fingerprint([t]) for t in out]
        sync(torch, device)
        return out, marks

    def record(name, out):
        """The outputs for the referee, written to a file."""
        save_outputs(save, os.path.join(out_dir, name + EXT), [to_host(t) for t in out])

    try:
        for name in request["trials"]:
            inputs = to_device(read_input(request, name), device)
            # Bits, not a copy: a multi-gigabyte input is not held twice on the device.
            pristine = [fingerprint([x]) if isinstance(x, torch.Tensor) else None
                        for x in inputs]
            out, marks = call(inputs)
            _check_side_effects(torch, tensors, name, inputs, pristine, out, marks, ref,
                                findings, fingerprint)
            record(name, out)
            result["outputs"].append([name, name])
            del out
            if loaded.kept_inputs is None:
                loaded.kept_inputs = inputs
            del inputs  # before the next trial's are made
        # Same buffers, new values: a result cache keyed on the input tensors must not survive it.
        if do_refill and loaded.kept_inputs is not None:
            kept, loaded.kept_inputs = loaded.kept_inputs, None
            for dst, src in zip(kept, read_input(request, checks[1])):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src.to(dst.device))
            out, _ = call(kept)
            del kept
            record("refill", out)
            result["outputs"].append(["refill", checks[1]])
            del out
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
                        fingerprint):
    def fail(rule, message):
        if not any(f["rule"] == rule for f in findings):
            findings.append({"rule": rule, "severity": "fail", "message": message, "line": 0})

    for i, (x, p) in enumerate(zip(inputs, pristine)):
        if isinstance(x, torch.Tensor) and fingerprint([x]) != p:
            fail("input_mutation", f"candidate modified input {i} in place (trial {name})")
    for j, o in enumerate(out):
        if j < len(ref["output_aliases_input"]) and ref["output_aliases_input"][j]:
            continue
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor) and tensors.overlaps(o, x):
                fail("output_alias", f"output {j} aliases input {i} (trial {name}); the reference "
                     "returns new memory")
    for j, (o, mark) in enumerate(zip(out, marks)):
        if fingerprint([o]) != mark:
            fail("side_stream", f"output {j} changed after forward returned (trial {name}): "
                 "work was still running on another stream or thread")
