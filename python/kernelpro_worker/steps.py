"""The worker's one-shot steps by name: `python -m kernelpro_worker STEP ...` runs STEPS[STEP].
Each takes the request dict and returns the result dict (docs/worker-protocol.md).

A step never lets a candidate's failure escape as an exception: the failure is classified
(compile_error, runtime_error, ...) and returned. Where each step lives:

  loading.py         what several steps share: torch, the problem, the trials' inputs
  candidate.py       importing a candidate; the `build` step
  scan.py            `scan`: static checks of the problem and the candidate
  inspect_step.py    `inspect`: interpreter, torch and device facts, the reference's cost
  analyze_step.py    `analyze`: Stage 1 of the reference (analyze.py counts)
  reference_step.py  `reference`: the trials' inputs and expected outputs, and their cache
  check_step.py      `check`: the candidate's outputs on the check trials
  compare_step.py    `compare`: recorded outputs against expected ones
  profile_step.py    `run` and `trace`: the forward inside the profilers' NVTX range
  pch.py, energy.py, selftest.py   `pch`, `energy`, `timing_selftest`
  export_step.py     `export`: a candidate as a pip-installable package (docs/export.md)

Timing has no one-shot step: the long-lived workers time (session.py, timing.py).
"""

from . import analyze_step, candidate, check_step, compare_step, inspect_step, profile_step
from . import reference_step, scan


# pch, energy, timing_selftest and export are imported only by the process that runs them, as
# before the split: the other steps' processes (a candidate's among them) do not load their modules.
def step_pch(request):
    from .pch import step_pch as run

    return run(request)


def step_energy(request):
    from .energy import step_energy as run

    return run(request)


def step_export(request):
    from .export_step import step_export as run

    return run(request)


def step_timing_selftest(request):
    from .selftest import step_timing_selftest as run

    return run(request)


STEPS = {
    "scan": scan.step_scan,
    "pch": step_pch,
    "inspect": inspect_step.step_inspect,
    "analyze": analyze_step.step_analyze,
    "reference": reference_step.step_reference,
    "build": candidate.step_build,
    "check": check_step.step_check,
    "compare": compare_step.step_compare,
    "run": profile_step.step_run,
    "trace": profile_step.step_trace,
    "energy": step_energy,
    "timing_selftest": step_timing_selftest,
    "export": step_export,
}
