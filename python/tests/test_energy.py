"""The NVML energy protocol (kernelpro_worker/energy.py) against the fake NVML library
(tests/fixtures/fake_nvml/fake_nvml.c): its counter advances by idle watts over wall time plus
busy watts over this process's CPU time, so a CPU "kernel" stands in for a GPU one."""

import ctypes
import os

import pytest

from kernelpro_worker import energy
from kernelpro_worker.common import StepError


@pytest.fixture
def clean_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("FAKE_NVML_"):
            monkeypatch.delenv(name)
    return monkeypatch


def spin(n):
    def call():
        x = 0
        for i in range(n):
            x += i
        return x
    return call


def median(values):
    return energy._median(values)


def run(fake, arms, **kw):
    nvml = energy.Nvml(fake, 0)
    try:
        args = dict(window_s=0.1, windows=4, idle_windows=2, warmup_cap_s=0.3)
        args.update(kw)
        return nvml, energy.measure(nvml, arms, **args)
    finally:
        nvml.close()


def test_idle_power_is_subtracted_and_twice_the_work_costs_about_twice_the_energy(fake_nvml,
                                                                                   clean_env):
    clean_env.setenv("FAKE_NVML_IDLE_W", "60")
    clean_env.setenv("FAKE_NVML_BUSY_W", "200")
    arms = [energy.Arm("reference", "reference", spin(40000)),
            energy.Arm("candidate1", "light.py", spin(20000))]
    _, result = run(fake_nvml, arms)
    # Sleeping uses no CPU time: the idle windows see the scripted idle power alone.
    assert result["idle"]["watts"] == pytest.approx(60, rel=0.1)
    assert len(result["idle"]["windows"]) == 3  # two before, one after
    ref, cand = result["arms"]
    assert [w["round"] for w in ref["windows"]] == [0, 1, 2, 3]
    for arm in (ref, cand):
        assert len(arm["windows"]) == 4
        for w in arm["windows"]:
            assert w["calls"] > 0
            # What is left after idle is the busy power over the window's CPU time: positive.
            assert w["dynamic_mj"] == pytest.approx(w["raw_mj"] - result["idle"]["watts"] * 1000 *
                                                    w["seconds"])
            assert w["mj_per_call"] > 0
    ratio = (median([w["mj_per_call"] for w in ref["windows"]]) /
             median([w["mj_per_call"] for w in cand["windows"]]))
    assert 1.4 < ratio < 2.8
    assert result["before"] == {"sm_mhz": 1980, "mem_mhz": 3201, "power_limit_w": 700.0,
                                "temperature_c": result["before"]["temperature_c"]}
    assert result["after"]["temperature_c"] >= result["before"]["temperature_c"]
    assert result["clocks_locked_sm_mhz"] is None


def test_arms_alternate_within_each_round(fake_nvml, clean_env):
    arms = [energy.Arm("reference", "r", lambda: None),
            energy.Arm("candidate1", "a", lambda: None)]
    calls = iter(range(10 ** 9))
    # A clock that advances one second per reading: every window is over after its first call.
    _, result = run(fake_nvml, arms, window_s=0.5, windows=4, warmup_cap_s=0.0,
                    clock=lambda: float(next(calls)), sleep=lambda s: None)
    order = sorted((w["seq"], arm["name"]) for arm in result["arms"] for w in arm["windows"])
    assert [name for _, name in order] == ["reference", "candidate1", "candidate1", "reference",
                                           "reference", "candidate1", "candidate1", "reference"]
    assert all(w["calls"] >= 1 for arm in result["arms"] for w in arm["windows"])


class SimClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def advance(self, seconds):
        self.t += seconds


class SteppedNvml:
    """NVML as the H200 shows it: a counter that moves only every 0.1 s (here at a steady 700 W),
    read on a simulated clock."""

    def __init__(self, clock, watts=700.0, period_s=0.1):
        self.clock, self.watts, self.period_s = clock, watts, period_s

    def energy_mj(self):
        return int(self.clock() / self.period_s) * int(self.watts * self.period_s * 1000)

    def state(self):
        return {"sm_mhz": 1980, "mem_mhz": 3201, "power_limit_w": 700.0, "temperature_c": 40}


def test_windows_start_and_end_where_a_stepped_counter_moves():
    # Read at arbitrary instants, 0.45 s windows of a counter moving every 0.1 s would see 4 or 5
    # steps (622 or 778 W). On its steps, every window sees the 700 W that was drawn.
    clock = SimClock()
    nvml = SteppedNvml(clock)
    arm = energy.Arm("reference", "r", lambda: clock.advance(40e-6))
    result = energy.measure(nvml, [arm], window_s=0.45, windows=6, idle_windows=2,
                            warmup_cap_s=0.0, clock=clock, sleep=clock.advance)
    windows = result["arms"][0]["windows"]
    for w in windows:
        assert w["watts"] == pytest.approx(700, rel=0.02)
        assert w["seconds"] == pytest.approx(0.5, abs=0.002)  # five whole steps
        assert w["calls"] == pytest.approx(w["seconds"] / 40e-6, rel=0.01)
    assert result["idle"]["watts"] == pytest.approx(700, rel=0.02)


def test_clocks_are_never_touched_unless_asked(fake_nvml, clean_env):
    lib = ctypes.CDLL(fake_nvml)
    before = lib.fakeNvmlLockCalls()
    arms = [energy.Arm("reference", "r", spin(1000))]
    run(fake_nvml, arms, windows=1)
    assert lib.fakeNvmlLockCalls() == before
    _, locked = run(fake_nvml, arms, windows=1, lock_clocks=True)
    assert lib.fakeNvmlLockCalls() == before + 1
    assert locked["clocks_locked_sm_mhz"] == 1980


def test_an_nvml_error_is_named(fake_nvml, clean_env):
    clean_env.setenv("FAKE_NVML_INIT_ERROR", "9")
    with pytest.raises(energy.NvmlError) as raised:
        energy.Nvml(fake_nvml, 0)
    assert str(raised.value) == "nvmlInit_v2 failed: NVML error 9 (Driver Not Loaded)"


def test_a_missing_library_is_a_clear_error(tmp_path):
    with pytest.raises(StepError) as raised:
        energy.Nvml(str(tmp_path / "libnvidia-ml.so.1"), 0)
    assert raised.value.status == "nvml_unavailable"
    assert "cannot load the NVML library" in raised.value.message


def test_the_step_says_when_the_device_has_no_energy_counter(fake_nvml, clean_env):
    clean_env.setenv("FAKE_NVML_ENERGY_ERROR", "3")
    result = energy.step_energy({"device": "cpu", "nvml_library": fake_nvml})
    assert result["status"] == "nvml_unsupported"
    assert result["message"] == ("this device has no total-energy counter "
                                 "(nvmlDeviceGetTotalEnergyConsumption failed: NVML error 3 "
                                 "(Not Supported))")


def test_the_device_is_the_first_visible_ordinal():
    assert energy.device_index({"CUDA_VISIBLE_DEVICES": "3"}) == 3
    assert energy.device_index({"CUDA_VISIBLE_DEVICES": "2,5"}) == 2
    assert energy.device_index({}) == 0
    assert energy.device_index({"CUDA_VISIBLE_DEVICES": "GPU-1a2b"}) == 0
