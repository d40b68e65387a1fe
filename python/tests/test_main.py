"""The worker as the binary runs it: python -m kernelpro_worker STEP REQUEST RESULT."""

import json
import os
import subprocess
import sys
import time

from conftest import ROOT

# At import, a regular expression with catastrophic backtracking: a C loop that holds the GIL for
# far longer than any test runs, so no Python signal handler or thread could stop it.
GIL_HOG = '''import re
re.match(r"(a+)+$", "a" * 64 + "b")
'''


def run_worker(step, request, tmp_path, env):
    request_path, result_path = tmp_path / "request.json", tmp_path / "result.json"
    request_path.write_text(json.dumps(request))
    full_env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), **env)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kernelpro_worker", step, str(request_path),
                           str(result_path)], env=full_env, capture_output=True, text=True,
                          timeout=300)
    return proc, time.monotonic() - started, result_path


def test_the_worker_ends_itself_at_its_time_limit_even_while_c_code_holds_the_gil(tmp_path):
    candidate = tmp_path / "hog.py"
    candidate.write_text(GIL_HOG)
    request = {"device": "cpu", "candidate": str(candidate), "build_root": str(tmp_path / "builds")}
    # 30 s: the step imports torch before the candidate, which took more than 10 s on a loaded
    # 2-core machine, and then the stack showed torch's import instead of hog.py.
    proc, seconds, result_path = run_worker("build", request, tmp_path,
                                            {"KERNELPRO_STEP_TIMEOUT_S": "30"})
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Timeout (0:00:30)!" in proc.stderr
    assert "hog.py" in proc.stderr  # the stack shows where it was stuck
    assert not result_path.exists()
    assert seconds < 120


def test_without_the_variable_a_step_runs_to_its_result(tmp_path):
    problem = os.path.join(ROOT, "tests/problems/tiny_swish.py")
    proc, _, result_path = run_worker("scan", {"problem": problem}, tmp_path, {})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(result_path.read_text())["problem"]["reference_ops"] == ["sigmoid"]
