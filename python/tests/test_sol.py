"""The speed-of-light facts the referee gives (sol.py): the reference's work and, on the CPU, a
calibration of what this machine does at its best."""
import os

import torch

from kernelpro_worker import sol
from kernelpro_worker.session import Referee

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TINY_SWISH = os.path.join(ROOT, "tests", "problems", "tiny_swish.py")


def test_cpu_calibration_measures_a_copy_sized_like_the_inputs_and_a_matmul():
    small = sol.calibrate_cpu(torch, 1000)
    assert small["copy_bytes"] == 1 << 20  # never smaller than 1 MiB: all call overhead
    big = sol.calibrate_cpu(torch, 1 << 40)
    assert big["copy_bytes"] == 256 << 20  # never larger than 256 MiB: beyond every cache
    for c in (small, big):
        assert c["copy_bytes_per_s"] > 0 and c["matmul_flops_per_s"] > 0 and c["threads"] >= 1


def test_the_referee_counts_the_work_once_per_problem():
    referee = Referee()
    request = {"problem": TINY_SWISH, "device": "cpu", "init_seed": 42, "seed": 1}
    facts = referee.speed_of_light(request)
    assert facts["status"] == "ok"
    assert facts["analysis"]["input_bytes"] == 4096 * 4
    assert facts["analysis"]["min_bytes"] == 2 * 4096 * 4
    assert facts["calibration"]["copy_bytes_per_s"] > 0
    assert referee.speed_of_light(request) is facts  # every candidate meets the same bound
