"""The README.md of an exported package (export_step.py): what problem, which candidate, how fast
it was measured and where, which calls it serves, how to install and use it."""


def _speedup_line(ev):
    speedup = ev.get("speedup") or {}
    if not speedup.get("estimate"):
        return "not timed (no speedup recorded)"
    line = "{:.3f}x over the reference, 95 % interval [{:.3f}, {:.3f}]".format(
        speedup["estimate"], speedup.get("low", speedup["estimate"]),
        speedup.get("high", speedup["estimate"]))
    if ev.get("reference_ms") and ev.get("candidate_ms"):
        line += " (medians: reference {:.4g} ms, kernel {:.4g} ms)".format(
            ev["reference_ms"], ev["candidate_ms"])
    return line


def shown_faster(ev):
    """Whether the verdict shows the kernel faster than the reference: its speedup interval lies
    wholly above 1x (package_export.h ShownFaster)."""
    return ((ev.get("speedup") or {}).get("low") or 0) > 1.0


def readme(meta, guard_lines):
    ev = meta.get("evaluation") or {}
    pkg, op = meta["package"], meta["op_name"]
    python = meta.get("python") or "python3"
    where = ev.get("device_name") or meta["device"]
    if ev.get("torch_version"):
        where += f", torch {ev['torch_version']}"
    ext = ", ".join(e["name"] + (" (CUDA)" if e["with_cuda"] else " (C++)")
                    for e in meta["extensions"]) or "none (the candidate is Python/Triton)"
    lines = [
        f"# {pkg}: `torch.ops.kernelpro.{op}`",
        "",
        f"Written by `kernelpro export`. The kernel of `{meta['candidate_file']}` for the "
        f"problem `{meta['problem_file']}`, as a package: the candidate's source and the "
        "problem's are shipped verbatim (`candidate.py`, `reference.py`); the extensions its "
        "`load_inline` calls built are compiled at install time from `csrc/`.",
        "",
        "## Measured",
        "",
    ]
    if not shown_faster(ev):
        lines += [
            "**Warning: this kernel was not shown faster than the reference** (speedup "
            f"{_speedup_line(ev)}). It was exported as asked; the reference may serve you "
            "better.",
            "",
        ]
    lines += [
        f"- verdict: {ev.get('status', 'unknown')}"
        + (f" ({ev['criterion']} criterion)" if ev.get("criterion") else ""),
        f"- speedup: {_speedup_line(ev)}",
        f"- where: {meta['device']}: {where}",
        f"- how: {ev.get('timing_method') or 'kernelpro harness'}",
        f"- from: {ev.get('source') or 'kernelpro eval'}",
        f"- extensions: {ext}",
        "",
        "## What the operator serves (guards.json)",
        "",
        f"`torch.ops.kernelpro.{op}(inputs, impl_state, ref_state)` runs the kernel only for "
        "calls like those it was verified on; any other call runs the reference `Model`:",
        "",
    ]
    lines += [f"- {g}" for g in guard_lines]
    lines += [
        "- every tensor contiguous and on a device of type " + meta["device"],
        "",
        "`Model` built with other constructor arguments than the benchmark's is the reference "
        "alone.",
        "",
        "## Install and use",
        "",
        "```bash",
        f"{python} -m pip install --no-build-isolation DIR   # DIR: this folder",
        f"{python} -m {pkg}.selftest   # the operator against the reference",
        "```",
        "",
        f"`{python}` is the interpreter kernelpro ran with torch; the package builds against the "
        "torch of the interpreter that installs it, so use one that has torch (a bare `pip` on "
        "PATH may belong to another Python).",
        "",
        "```python",
        f"import {pkg}",
        f"model = {pkg}.Model(*init_args).to(\"{meta['device']}\")   # the problem's Model "
        "constructor",
        "y = model(*inputs)        # calls the operator",
        f"compiled = torch.compile(model)   # torch >= 2.4: the operator has a fake kernel",
        "```",
        "",
        f"The operator takes the forward's tensors, then the state (parameters and buffers) of "
        "the candidate's `ModelNew` and of the reference `Model`, so torch.compile sees tensors "
        "only; both models are built with the harness's seed "
        f"({meta['init_seed']}) and hold the same weights. It has no autograd formula "
        "(inference only). On torch < 2.4 it is registered with torch.library.Library and "
        "torch.compile of it is not supported.",
        "",
    ]
    if meta.get("notes"):
        lines += ["## Notes", ""] + [f"- {n}" for n in meta["notes"]] + [""]
    return "\n".join(lines)
