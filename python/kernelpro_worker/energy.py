"""Energy per call from NVML's total-energy counter (docs/energy-nvml.md).

The `energy` step measures, in one process and one session, the reference (the problem's Model,
or a program's BaselineModel) and each candidate:

  state before ─► idle windows (sleeping) ─► warm-up of every arm to steady state ─►
  W rounds: one window of ~window_s of back-to-back calls per arm, the arms' order rotating from
  round to round ─► idle windows ─► state after

Each window reads the counter (millijoules since the driver loaded) at its start and its end,
both taken where the counter changes (it moves in steps, about every 0.1 s on the H200: a window
read at arbitrary instants would be off by up to a step), and counts its calls. Idle power is
the median of the idle windows' power; a window's dynamic energy is its raw energy minus idle
power times its length, and its energy per call that over its calls. The step returns every
window; the binary takes the medians and intervals (src/eval/energy.h), so the statistics are the
same code as the timing's.

NVML is reached through its C API with ctypes: the driver's libnvidia-ml.so.1, or the library
KERNELPRO_NVML_LIBRARY (the request's `nvml_library`) names (tests use a fake). Clocks are
measured as found and recorded before and after; only `lock_clocks` (`--lock-clocks`, opt-in)
locks the SM clock, to the clock found after the warm-up, and the lock is undone at the end.
"""

import ctypes
import os
import time

from .common import StepError

DEFAULT_LIBRARY = "libnvidia-ml.so.1"

# The C API calls the protocol cannot do without.
REQUIRED = ("nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlDeviceGetHandleByIndex_v2",
            "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetClockInfo",
            "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetTemperature")
NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0


class NvmlError(Exception):
    """An NVML call that returned an error code; `message` names the call, code and its text."""

    def __init__(self, call, code, text):
        self.call, self.code, self.text = call, code, text
        super().__init__(f"{call} failed: NVML error {code} ({text})")


class Nvml:
    """The few NVML calls the protocol needs, on one device. Opened with nvmlInit_v2; close()
    calls nvmlShutdown (and undoes a clock lock this object made)."""

    def __init__(self, library=None, index=0):
        self.library = library or DEFAULT_LIBRARY
        try:
            self.lib = ctypes.CDLL(self.library)
        except OSError as e:
            raise StepError("nvml_unavailable", f"cannot load the NVML library {self.library}: {e} "
                            "(NVML comes with the NVIDIA driver; no driver, no energy counter)")
        missing = [f for f in REQUIRED if not hasattr(self.lib, f)]
        if missing:
            raise StepError("nvml_unavailable", f"{self.library} is not an NVML library (it has no "
                            f"{', '.join(missing)})")
        self.lib.nvmlErrorString.restype = ctypes.c_char_p
        self.locked = False
        self._check("nvmlInit_v2", self.lib.nvmlInit_v2())
        self.index = index
        self.handle = ctypes.c_void_p()
        try:
            self._check("nvmlDeviceGetHandleByIndex_v2",
                        self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index),
                                                              ctypes.byref(self.handle)))
        except NvmlError:
            self.lib.nvmlShutdown()
            raise

    def _check(self, call, code):
        if code != NVML_SUCCESS:
            text = self.lib.nvmlErrorString(code)
            raise NvmlError(call, code, text.decode(errors="replace") if text else "unknown")

    def _uint(self, call, *args):
        value = ctypes.c_uint()
        self._check(call, getattr(self.lib, call)(self.handle, *args, ctypes.byref(value)))
        return value.value

    def energy_mj(self):
        """The device's total energy since the driver loaded, in millijoules."""
        value = ctypes.c_ulonglong()
        self._check("nvmlDeviceGetTotalEnergyConsumption",
                    self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(value)))
        return value.value

    def name(self):
        buf = ctypes.create_string_buffer(96)
        try:
            self._check("nvmlDeviceGetName", self.lib.nvmlDeviceGetName(self.handle, buf, 96))
        except (NvmlError, AttributeError):
            return ""
        return buf.value.decode(errors="replace")

    def state(self):
        """Clocks, power limit and temperature as they are now."""
        return {"sm_mhz": self._uint("nvmlDeviceGetClockInfo", ctypes.c_int(NVML_CLOCK_SM)),
                "mem_mhz": self._uint("nvmlDeviceGetClockInfo", ctypes.c_int(NVML_CLOCK_MEM)),
                "power_limit_w": self._uint("nvmlDeviceGetEnforcedPowerLimit") / 1000.0,
                "temperature_c": self._uint("nvmlDeviceGetTemperature",
                                            ctypes.c_int(NVML_TEMPERATURE_GPU))}

    def sm_mhz(self):
        """The SM clock now, in MHz."""
        return self._uint("nvmlDeviceGetClockInfo", ctypes.c_int(NVML_CLOCK_SM))

    def lock_sm_clock(self, mhz):
        self._check("nvmlDeviceSetGpuLockedClocks",
                    self.lib.nvmlDeviceSetGpuLockedClocks(self.handle, ctypes.c_uint(mhz),
                                                          ctypes.c_uint(mhz)))
        self.locked = True

    def close(self):
        if self.locked:
            self.locked = False
            self.lib.nvmlDeviceResetGpuLockedClocks(self.handle)
        self.lib.nvmlShutdown()


def device_index(env=None):
    """NVML counts every GPU of the machine, CUDA only the visible ones: the step's device is the
    first ordinal of CUDA_VISIBLE_DEVICES (the binary's GPU lease sets it), else 0."""
    visible = (env if env is not None else os.environ).get("CUDA_VISIBLE_DEVICES", "")
    first = visible.split(",")[0].strip()
    return int(first) if first.isdigit() else 0


class Arm:
    """One side of the measurement: `call()` runs one forward call (asynchronously on a GPU)."""

    def __init__(self, name, label, call):
        self.name, self.label, self.call = name, label, call


# How often the counter is read while waiting for it to change, and how long to wait before
# taking the window's boundary as it is (a counter that never seems to change: a fake, or a
# driver that updates it continuously).
TICK_POLL_S = 0.001
TICK_GIVE_UP_S = 1.0


def _until_tick(nvml, step, clock):
    """Runs `step()` (a call, or a short sleep) until NVML's counter changes: the counter is not
    continuous (on the H200 it moves about every 0.1 s, so a 2 s window read at arbitrary
    instants is off by up to a twentieth, alternately up and down). Returns (energy, time, steps)
    at the first reading that differs, which puts a window's boundary on an update of the
    counter. After TICK_GIVE_UP_S without a change, returns the reading as it is."""
    e0, start = nvml.energy_mj(), clock()
    last_poll, steps = start, 0
    while True:
        step()
        steps += 1
        t = clock()
        if t - last_poll >= TICK_POLL_S:
            last_poll = t
            e = nvml.energy_mj()
            if e != e0 or t - start >= TICK_GIVE_UP_S:
                return e, t, steps


def _window(nvml, arm, seconds, sync, clock):
    """Back-to-back calls from one update of the counter to the first update after `seconds`:
    the window's raw energy (mJ), its length and its calls. A lead-in of calls (not counted) fills
    the device's queue before the first update is waited for, so the calls launched between the
    two updates are the calls executed between them."""
    sync()
    lead_end = clock() + min(0.1, seconds / 4)
    while clock() < lead_end:
        arm.call()
    e0, t0, _ = _until_tick(nvml, arm.call, clock)
    calls = 0
    while True:
        arm.call()
        calls += 1
        if clock() - t0 >= seconds:
            break
    e1, t1, tail = _until_tick(nvml, arm.call, clock)
    sync()
    return {"raw_mj": e1 - e0, "seconds": t1 - t0, "calls": calls + tail}


def _idle_window(nvml, seconds, sleep, clock):
    """A window of sleeping, its boundaries on updates of the counter like a measured window's."""
    nap = lambda: sleep(TICK_POLL_S)  # noqa: E731
    e0, t0, _ = _until_tick(nvml, nap, clock)
    sleep(seconds)
    e1, t1, _ = _until_tick(nvml, nap, clock)
    dt = max(t1 - t0, 1e-9)
    return {"raw_mj": e1 - e0, "seconds": dt, "watts": (e1 - e0) / 1000.0 / dt}


def _median(values):
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return 0.0
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def warm_up(nvml, arm, window_s, cap_s, sync, clock, settle=0.02, steady=3):
    """Calls in short windows (a quarter of `window_s`) until `steady` consecutive windows draw
    power within `settle` (relative) of the one before, or `cap_s` has passed: the clocks and
    the temperature have come up to what the measured windows will see."""
    short = max(window_s / 4, 0.01)
    start = clock()
    calls, last, run, settled, powers = 0, None, 0, False, []
    while clock() - start < cap_s:
        w = _window(nvml, arm, short, sync, clock)
        calls += w["calls"]
        power = w["raw_mj"] / 1000.0 / max(w["seconds"], 1e-9)
        powers.append(power)
        if last is not None and last > 0 and abs(power - last) / last <= settle:
            run += 1
            if run >= steady:
                settled = True
                break
        else:
            run = 0
        last = power
    return {"seconds": clock() - start, "calls": calls, "settled": settled,
            "watts": powers[-steady:]}


def measure(nvml, arms, window_s=2.0, windows=30, idle_windows=3, idle_s=None, warmup_cap_s=30.0,
            lock_clocks=False, sync=lambda: None, clock=time.monotonic, sleep=time.sleep):
    """The protocol above on `arms` (the reference first). Returns the step's result fields."""
    idle_s = window_s if idle_s is None else idle_s
    before = nvml.state()
    idle = [_idle_window(nvml, idle_s, sleep, clock) for _ in range(idle_windows)]
    warmups = [warm_up(nvml, arm, window_s, warmup_cap_s, sync, clock) for arm in arms]
    locked = None
    if lock_clocks:
        locked = nvml.state()["sm_mhz"]
        nvml.lock_sm_clock(locked)
    per_arm = [[] for _ in arms]
    order = list(range(len(arms)))
    seq = 0  # the windows' order over all arms
    for w in range(windows):
        # The order rotates so no arm always follows the same one (drift and the heat one arm
        # leaves behind are shared out).
        rotated = order[w % len(order):] + order[:w % len(order)]
        for i in rotated:
            per_arm[i].append(dict(_window(nvml, arms[i], window_s, sync, clock), round=w,
                                   seq=seq))
            seq += 1
    idle += [_idle_window(nvml, idle_s, sleep, clock) for _ in range(max(1, idle_windows - 1))]
    after = nvml.state()
    idle_w = _median([x["watts"] for x in idle])
    arms_out = []
    for arm, warm, rows in zip(arms, warmups, per_arm):
        for r in rows:
            r["watts"] = r["raw_mj"] / 1000.0 / max(r["seconds"], 1e-9)
            r["dynamic_mj"] = r["raw_mj"] - idle_w * 1000.0 * r["seconds"]
            r["mj_per_call"] = r["dynamic_mj"] / r["calls"]
        arms_out.append({"name": arm.name, "label": arm.label, "warmup": warm, "windows": rows})
    return {"status": "ok", "message": "", "window_s": window_s, "windows": windows,
            "idle": {"watts": idle_w, "windows": idle}, "before": before, "after": after,
            "clocks_locked_sm_mhz": locked, "arms": arms_out}


# ----------------------------------------------------------------------------------------------
# The worker step


def _arms(request, torch, device):
    """The reference's arm and one per candidate, rotating through the timing input sets."""
    from . import programs
    from .candidate import import_candidate
    from .common import to_device
    from .loading import construct, load_problem, read_input

    init_inputs = read_input(request, "init_inputs")
    trials = request["reference"]["trials"]
    names = trials.get("timing") or trials["check"][:1]
    sets = [to_device(read_input(request, n), device) for n in names]
    module = load_problem(request["problem"])
    models = [("reference", "reference",
               construct(torch, programs.baseline_class(module), init_inputs,
                         request["init_seed"], device))]
    for i, candidate in enumerate(request.get("candidates", [])):
        sub = dict(request, candidate=candidate["candidate"], build_root=candidate["build_root"])
        module, _ = import_candidate(sub, torch, [])
        model = construct(torch, module.ModelNew, init_inputs, request["init_seed"], device)
        models.append((f"candidate{i + 1}", candidate["candidate"], model))

    def caller(model):
        state = {"i": 0}

        def call():
            inputs = sets[state["i"] % len(sets)]
            state["i"] += 1
            model(*inputs)
        return call

    return [Arm(name, label, caller(model)) for name, label, model in models]


def step_energy(request):
    """Request: what a candidate's process gets (CandidateRequest) without `candidate`, plus
    `candidates` ([{candidate, build_root}]), `nvml_library`, `window_s`, `windows`,
    `idle_windows`, `warmup_cap_s`, `lock_clocks`."""
    from .loading import classify_runtime, import_torch

    device = request["device"]
    torch = import_torch(device)
    try:
        nvml = Nvml(request.get("nvml_library") or None, device_index())
    except NvmlError as e:
        return {"status": "nvml_error", "message": str(e)}
    try:
        try:
            nvml.energy_mj()
        except NvmlError as e:
            if e.code == NVML_ERROR_NOT_SUPPORTED:
                return {"status": "nvml_unsupported",
                        "message": f"this device has no total-energy counter ({e})"}
            raise
        try:
            with torch.no_grad():
                arms = _arms(request, torch, device)
        except StepError:
            raise
        except Exception as e:  # noqa: BLE001 - a model that fails to build or construct
            status, message = classify_runtime(e)
            return {"status": status, "message": message}
        sync = (lambda: torch.cuda.synchronize()) if device == "cuda" else (lambda: None)
        try:
            with torch.no_grad():
                result = measure(nvml, arms, window_s=float(request.get("window_s", 2.0)),
                                 windows=int(request.get("windows", 30)),
                                 idle_windows=int(request.get("idle_windows", 3)),
                                 warmup_cap_s=float(request.get("warmup_cap_s", 30.0)),
                                 lock_clocks=bool(request.get("lock_clocks", False)), sync=sync)
        except NvmlError:
            raise
        except Exception as e:  # noqa: BLE001 - a call that fails while measured
            status, message = classify_runtime(e)
            return {"status": status, "message": message}
        result["device"] = {"index": nvml.index, "name": nvml.name(), "library": nvml.library}
        return result
    except NvmlError as e:
        return {"status": "nvml_error", "message": str(e)}
    finally:
        nvml.close()
