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
        assert c["vector_flops_per_s"] > 0


def test_the_referee_counts_the_work_once_per_problem():
    referee = Referee()
    request = {"problem": TINY_SWISH, "device": "cpu", "init_seed": 42, "seed": 1}
    facts = referee.speed_of_light(request)
    assert facts["status"] == "ok"
    assert facts["analysis"]["input_bytes"] == 4096 * 4
    assert facts["analysis"]["min_bytes"] == 2 * 4096 * 4
    assert facts["calibration"]["copy_bytes_per_s"] > 0
    assert referee.speed_of_light(request) is facts  # every candidate meets the same bound


def test_a_second_calibration_keeps_each_rate_at_its_best():
    earlier = {"copy_bytes": 1 << 20, "copy_bytes_per_s": 5e9, "matmul_flops_per_s": 1e9,
               "threads": 1}
    later = {"copy_bytes": 1 << 20, "copy_bytes_per_s": 3e9, "matmul_flops_per_s": 4e9,
             "threads": 1}
    best = sol.best_of(earlier, later)
    assert best["copy_bytes_per_s"] == 5e9 and best["matmul_flops_per_s"] == 4e9
    assert best["calibrations"] == 2
    assert sol.best_of(best, later)["calibrations"] == 3


def test_the_referee_calibrates_again_when_asked_and_keeps_the_best():
    referee = Referee()
    request = {"problem": TINY_SWISH, "device": "cpu", "init_seed": 42, "seed": 1}
    first = dict(referee.speed_of_light(request)["calibration"])
    again = referee.speed_of_light(dict(request, recalibrate=True))["calibration"]
    assert again["calibrations"] == 2
    assert again["matmul_flops_per_s"] >= first["matmul_flops_per_s"]
    assert again["copy_bytes_per_s"] >= first["copy_bytes_per_s"]
