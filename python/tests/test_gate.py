"""The gate (gate.py) and the timer's use of it, on the CPU: a fake CUDA namespace whose spin
kernel, launches and profiler records are simulated on a clock the test controls."""

import contextlib
import types

import pytest
import torch

from kernelpro_worker import gate
from kernelpro_worker.timing import MARKER_BYTES, Timer


def _rec(correlation, start, end, name="kernel", stream=7):
    return {"correlation": correlation, "stream": stream, "start_ns": start, "end_ns": end,
            "bytes": 0, "name": name}


def test_a_gated_calls_span_and_busy_time_leave_the_gate_out():
    records = [_rec(1, 0, 100_000, "at::cuda::spin_kernel(long)"),
               _rec(2, 101_000, 102_000), _rec(3, 103_000, 104_500, stream=8),
               _rec(4, 104_000, 105_000)]
    read = gate.read_call(records, gated=True)
    assert read["gate_ns"] == (0, 100_000)
    assert read["span_ns"] == (101_000, 105_000)  # the device's own gaps stay in the span
    assert read["busy_ns"] == 1_000 + 2_000       # ...and out of the busy time (overlap once)
    assert read["early"] == 0 and read["records"] == 3


def test_work_that_started_before_the_gate_ended_is_early():
    records = [_rec(1, 0, 100_000, "spin_kernel"), _rec(2, 5_000, 6_000, stream=8),
               _rec(3, 100_900, 102_000)]
    assert gate.read_call(records, gated=True)["early"] == 1
    # Only the first spin of the call is the gate: a candidate's own spin is its work.
    own = [_rec(1, 0, 100_000, "spin_kernel"), _rec(2, 101_000, 150_000, "spin_kernel")]
    assert gate.read_call(own, gated=True)["span_ns"] == (101_000, 150_000)
    # A gated call whose gate record is missing cannot be said to be held.
    assert gate.read_call([_rec(2, 5_000, 6_000)], gated=True)["early"] == 1
    # Ungated calls have no gate: a spin there is work.
    assert gate.read_call(own, gated=False)["span_ns"] == (0, 150_000)
    assert gate.read_call([], gated=True)["span_ns"] is None


def test_the_gate_is_sized_from_the_launches_lengthened_on_a_miss_and_capped():
    g = gate.Gate.__new__(gate.Gate)
    g.__init__(types.SimpleNamespace(cuda=types.SimpleNamespace(_sleep=None, Event=None)), 1500)
    assert g.size() == gate.MIN_US  # no launch seen yet
    for us in (20.0, 35.0, 30.0):
        g.saw_launch(us)
    assert g.size() == pytest.approx(4 * 35 + 50)
    assert g.cycles() == int(190 * 1500)
    # One hiccup among many launches does not size the gate.
    for us in [30.0] * 20 + [20_000.0]:
        g.saw_launch(us)
    assert g.size() == pytest.approx(4 * 30 + 50)
    assert g.lengthen() and g.length_us == pytest.approx(680)
    assert g.size() == pytest.approx(680)  # a retry's length is a floor from then on
    g.calibrate([500_000, 340_000, 400_000], asked_cycles=680 * 1500)  # the clock ran higher
    assert g.cycles_per_us == pytest.approx(680 * 1500 / 400)
    g.length_us = gate.MAX_US
    assert not g.lengthen()


class _Clock:
    def __init__(self):
        self.ns = 0
        self.correlation = 0
        self.records = []

    def launch(self, name, duration_ns, stream=7, start=None, nbytes=0):
        self.correlation += 1
        begin = self.ns if start is None else start
        self.records.append({"correlation": self.correlation, "stream": stream,
                             "start_ns": begin, "end_ns": begin + duration_ns,
                             "bytes": nbytes, "name": name})
        self.ns = max(self.ns, begin + duration_ns)


class _Event:
    """The gate's event (the first made after a spin) is pending unless the test says the gate
    ended before forward returned; every other event is done."""

    def __init__(self, fake, enable_timing=False):
        self.fake, self.is_gate = fake, fake.spun
        fake.spun = False

    def record(self):
        pass

    def query(self):
        return self.fake.released_early if self.is_gate else True

    def elapsed_time(self, other):
        return 0.001


class _Tracer:
    def __init__(self, clock):
        self.clock, self.stream_id = clock, 99

    def mark(self):
        self.clock.launch("Memcpy HtoD (Pinned -> Device)", 10, stream=99, nbytes=MARKER_BYTES)

    def open(self):
        self.clock.records = []

    def close(self):
        return list(self.clock.records)


def _fake_cuda_torch(clock, state):
    def sleep(cycles):
        state.spun = True
        clock.launch("at::cuda::(anonymous namespace)::spin_kernel(long)", cycles // 2)

    cuda = types.SimpleNamespace(
        Stream=lambda: None, stream=lambda s: contextlib.nullcontext(),
        Event=lambda enable_timing=False: _Event(state, enable_timing),
        synchronize=lambda: None, _sleep=sleep, current_device=lambda: 0)
    fake = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch)
                                    if not k.startswith("__") and k != "cuda"})
    fake.cuda = cuda
    return fake


def _timer(model_launches, released_early=False):
    """A CUDA timer over a fake device: each forward launches `model_launches(clock)`."""
    clock = _Clock()
    state = types.SimpleNamespace(released_early=released_early, spun=False)
    fake = _fake_cuda_torch(clock, state)

    def forward(x):
        model_launches(clock)
        return x

    timer = Timer(fake, "cuda", forward, [[torch.ones(4)]], flush_bytes=0, spans=False)
    timer.tracer = _Tracer(clock)
    timer.clock = None
    return timer, clock, state


def _three_kernels(clock):
    for _ in range(3):  # back to back behind the gate: 1 us of the device's own between them
        clock.launch("kernel", 1_000)
        clock.ns += 1_000


def test_gated_calls_are_timed_without_host_gaps_and_say_so():
    timer, clock, _ = _timer(_three_kernels)
    timer.warm_up(0.0, 5)
    block = timer.block(4)
    assert block["gate_held"] is True and block["gate_note"] == ""
    assert block["times_ms"] == [pytest.approx(0.005)] * 4  # 3 kernels + 2 gaps, not the gate
    assert block["busy_ms"] == [pytest.approx(0.003)] * 4
    assert block["gate_us"] >= gate.MIN_US
    assert len(block["host_ms"]) == 3  # the warm-up's ungated calls after the first two
    assert "gate" in block["method"] and "no host launch gap" in block["method"]


def test_work_on_a_stream_the_gate_does_not_hold_is_timed_ungated_and_said():
    def side_stream(clock):  # starts at once, on its own stream, while the gate still spins
        clock.launch("kernel", 2_000, stream=13, start=clock.ns - 50_000)

    timer, _, _ = _timer(side_stream)
    timer.warm_up(0.0, 3)
    block = timer.block(3)
    assert block["gate_held"] is False and block["gate_retries"] == gate.RETRIES + 1
    assert "stream the gate does not hold" in block["gate_note"]
    assert "ungated" in block["method"]
    # Later blocks stay ungated without trying again.
    assert timer.block(2)["gate_retries"] == 0


def test_a_forward_that_waits_on_the_device_is_timed_ungated_and_said():
    timer, _, state = _timer(_three_kernels, released_early=True)
    timer.warm_up(0.0, 3)
    block = timer.block(3)
    assert block["gate_held"] is False
    assert "still launching when the gate ended" in block["gate_note"]
    assert len(block["times_ms"]) == 3 and len(block["host_ms"]) == 3  # the timed calls' own


def test_a_gated_call_with_no_device_work_is_timed_by_its_launch_not_the_gate():
    timer, _, _ = _timer(lambda clock: None)
    timer.warm_up(0.0, 3)
    block = timer.block(3)
    assert block["gate_held"] is True and block["no_device_work_calls"] == 3
    assert all(t < 1.0 for t in block["times_ms"])  # host time of forward, never the gate's


def test_the_runtime_records_cross_check_counts_calls_launched_after_their_gate():
    held = [_rec(1, 0, 100_000, "spin_kernel"), _rec(2, 101_000, 102_000),
            _rec(3, 102_500, 103_000)]
    late = [_rec(11, 200_000, 300_000, "spin_kernel"), _rec(12, 301_000, 302_000),
            _rec(13, 340_000, 341_000)]
    # Host-side ends of the launches (the gate's own launch included): call 2's last launch
    # returned at 320 us, after its gate ended at 300 us (a forward that synchronised inside).
    ends = {1: -5_000, 2: 30_000, 3: 35_000, 11: 195_000, 12: 250_000, 13: 320_000}
    assert gate.launched_after_release([held, late], ends) == 1
    assert gate.launched_after_release([held], ends) == 0
    # The profiler kept no runtime-API record: nothing to check with, and said so.
    assert gate.launched_after_release([held, late], {}) is None


def test_a_gated_block_says_when_no_runtime_records_were_there_to_check():
    timer, _, _ = _timer(_three_kernels)
    timer.warm_up(0.0, 3)
    block = timer.block(2)
    assert block["gate_held"] is True and block["gate_runtime_late"] is None
