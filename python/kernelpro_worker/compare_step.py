"""The `compare` step: a candidate's recorded outputs against the reference's expected ones, in
a process that never imports the candidate (this module does not import candidate.py)."""

import os

from . import plain, reference_step
from .loading import EXT, reference_changed


def compare_recorded(torch, actual, want, atol, rtol, vacuous, vacuous_rel_tol):
    """A recorded output set (what plain.load read) against the expected tensors: the row
    fields of its worst output (`passed`, `reason`, errors). Anything but a list of plain tensors,
    or a different number of outputs, fails. Where the problem is vacuous (an all-zero output
    would pass the tolerance), the relative L2 error is held to `vacuous_rel_tol` too."""
    from . import tensors

    if type(actual) is not list or not all(type(t) is torch.Tensor for t in actual):
        return {"passed": False, "reason": "the recorded output is not a list of tensors"}
    if len(actual) != len(want):
        return {"passed": False,
                "reason": f"{len(actual)} outputs where the reference returns {len(want)}"}
    worst = None
    for j, (a, e) in enumerate(zip(actual, want)):
        cmp = tensors.compare_output(a, e, atol, rtol, index=j)
        if vacuous and cmp["passed"] and a.is_floating_point():
            err = tensors.relative_l2_error(a, e)
            cmp["relative_l2_error"] = err
            if err > vacuous_rel_tol:
                cmp["passed"] = False
                cmp["reason"] = (f"relative error {err:.3g} exceeds {vacuous_rel_tol} "
                                 "(checked because the tolerance alone would accept an all-zero "
                                 "output)")
        if len(want) > 1 and cmp["reason"] and not cmp["reason"].startswith("output "):
            cmp["reason"] = f"output {j}: " + cmp["reason"]
        if (worst is None or not cmp["passed"]
                or (cmp["max_abs_err"] or 0) > (worst["max_abs_err"] or 0)):
            if worst is None or worst["passed"]:
                worst = cmp
    return worst


def step_compare(request):
    """Compares a candidate's recorded outputs with the reference's.

    `reference_dir` holds the expected outputs; `reference` (inline, from the binary's copy of the
    reference step's result) gives their manifest and the metadata the comparison needs. Outputs
    too large to store (the reference's `expected_recipe`) are recomputed here from the problem,
    the inputs tree (`inputs_dir`, `inputs_manifest`, `inputs_recipe`) and checked against their
    digest (reference_step.recompute_expected). A candidate's output file is data it wrote:
    anything but plain tensors is an incorrect output."""
    import torch
    from . import tensors

    ref_dir = request["reference_dir"]
    ref = request["reference"]
    manifest = ref.get("reference_manifest") or {}
    recipe = ref.get("expected_recipe") or {}
    atol, rtol = request["atol"], request["rtol"]

    def expected(folder, name, required=True):
        rel = f"{folder}/{name}{EXT}"
        if rel not in manifest and rel in recipe:
            return reference_step.recompute_expected(request, rel, recipe[rel])
        if rel not in manifest:
            if not required:
                return None
            raise reference_changed(f"the reference's {rel}", "not in the manifest")
        try:
            return plain.load(os.path.join(ref_dir, rel), sha256=manifest[rel])
        except (OSError, plain.PlainError) as e:
            raise reference_changed(f"the reference's {rel}", e) from None

    rows = []
    first_failure = ""
    precision_failure = ""
    for actual_name, expected_name in request["pairs"]:
        path = os.path.join(request["actual_dir"], actual_name + EXT)
        label = actual_name.rpartition("/")[2]  # "check/check_1" -> "check_1"
        row = {"trial": label, "expected": expected_name, "passed": False}
        rows.append(row)
        want = expected("expected", expected_name)
        actual = None
        if not os.path.exists(path):
            row["reason"] = "no output was recorded"
        else:
            try:
                actual = plain.load(path)
            except (OSError, plain.PlainError) as e:
                row["reason"] = f"the recorded output is not plain tensors: {e}"
        if actual is not None:
            row.update(compare_recorded(torch, actual, want, atol, rtol, ref["vacuous"],
                                        request["vacuous_rel_tol"]))
        out64 = None
        if row["passed"] and ref["fp32"] and request["precision_policy"] != "off":
            out64 = expected("expected64", expected_name, required=False)
        if out64 is not None:
            err = max(tensors.relative_l2_error(a, e) for a, e in zip(actual, out64)
                      if a.is_floating_point())
            fp64_error = ref.get("reference_fp64_error") or 0.0
            bound = max(request["precision_factor"] * fp64_error, request["precision_bound"])
            row["fp64_relative_error"] = err
            row["fp64_bound"] = bound
            if not err <= bound:  # NaN fails too
                precision_failure = precision_failure or (
                    f"lowered precision: relative error against an fp64 reference is {err:.3g}, "
                    f"above the {bound:.3g} that fp32 arithmetic stays within (the fp32 reference "
                    f"itself: {fp64_error:.3g}); TF32 or half-precision math in an fp32 problem")
        if not row["passed"] and not first_failure:
            first_failure = f"trial {label}: {row.get('reason', 'mismatch')}"
    blocking_precision = precision_failure if request["precision_policy"] == "fail" else ""
    passed = not first_failure and not blocking_precision
    message = "; ".join(m for m in (blocking_precision, first_failure) if m)
    return {"passed": passed, "message": message, "precision_warning": precision_failure,
            "trials": rows}
