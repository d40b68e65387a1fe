"""timer_probe.py without a GPU: its plan and its table."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timer_probe  # noqa: E402


def test_dry_run_names_every_case_and_way():
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "timer_probe.py"),
                          "--dry-run", "--blocks", "4"], capture_output=True, text=True, check=True)
    assert "add_128, relu_4m, swish_16m: 4 blocks" in out.stdout
    assert "with the hold, after the flush only, and KernelBench's way" in out.stdout


def test_the_table_shows_each_way_with_its_blocks():
    rows = [{"case": "add_128", "hold": {"block_medians_us": [3.0, 3.2, 3.1], "host_launch_us": 7.5},
             "flush only": {"block_medians_us": [3.5, 20.0, 3.6]},
             "kernelbench style": {"block_medians_us": [5.0, 5.1, 5.2]}}]
    text = timer_probe.table(rows)
    assert "| add_128 | hold | 3.10 | 3.00 / 3.20 | 7.5 | 3.0 3.2 3.1 |" in text
    assert "| add_128 | flush only | 3.60 | 3.50 / 20.00 | - | 3.5 20.0 3.6 |" in text
    assert "| add_128 | kernelbench style | 5.10 |" in text
