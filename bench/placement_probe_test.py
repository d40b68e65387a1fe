"""placement_probe.py on the CPU: the probe runs end to end and prints every condition."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_the_probe_runs_every_condition_on_the_cpu(tmp_path):
    out = tmp_path / "probe.json"
    ran = subprocess.run([sys.executable, os.path.join(HERE, "placement_probe.py"), "--device",
                          "cpu", "--exp", "12", "--rounds", "2", "--calls", "2", "--json-out",
                          str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(out.read_text())["busy_us"]
    assert {"in-0", "in-7", "out-7", "in+0", "out+1048576"} <= set(rows)
    assert "spread" in ran.stdout
