"""The one-shot steps' table (steps.py): every step the binary names, and what a step's process
imports before it runs."""

import json
import os
import subprocess
import sys

from kernelpro_worker import steps

from conftest import ROOT


def test_every_step_the_binary_runs_is_in_the_table():
    assert sorted(steps.STEPS) == sorted([
        "scan", "pch", "inspect", "analyze", "reference", "build", "check", "compare", "run",
        "trace", "energy", "timing_selftest", "export"])


def test_the_table_imports_neither_torch_nor_the_steps_it_does_not_run():
    # torch takes seconds to import: the scan step must not pay for it, and a candidate's
    # process loads no worker module it does not use (the patch guard watches them all).
    code = ("import json, sys; import kernelpro_worker.steps; "
            "print(json.dumps(sorted(m for m in sys.modules if m == 'torch' "
            "or m.startswith('kernelpro_worker.'))))")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = json.loads(proc.stdout)
    assert "torch" not in loaded
    for lazy in ("energy", "pch", "selftest", "timing", "tensors", "guard", "buildcache"):
        assert f"kernelpro_worker.{lazy}" not in loaded
