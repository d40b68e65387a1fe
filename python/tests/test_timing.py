"""timing.py on CPU: fresh inputs for every timed call, rebuilt bit for bit by the referee."""

import torch

from kernelpro_worker.timing import SCALE_LOW, Timer, perturbed


def test_perturbed_inputs_are_new_reproducible_and_stay_in_the_domain():
    base = [torch.randn(1000), torch.rand(1000) * 0.99, torch.arange(10), 3.5,
            torch.tril(torch.randn(8, 8))]
    a = perturbed(torch, base, 12345)
    again = perturbed(torch, base, 12345)
    other = perturbed(torch, base, 12346)
    for x, y in zip(a, again):
        assert torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y
    assert not torch.equal(a[0], base[0]) and not torch.equal(a[0], other[0])
    ratio = a[0] / base[0]
    assert ratio.min() >= SCALE_LOW and ratio.max() < 1.0
    assert torch.equal(torch.sign(a[0]), torch.sign(base[0]))
    assert a[1].max() < 0.99 and a[1].min() >= 0  # bounds like [0, 1) survive
    assert torch.equal(a[2], base[2])  # integers are indices, shapes, labels: kept
    assert a[3] == 3.5
    assert torch.equal(torch.tril(a[4]), a[4])  # zeros stay zero: structure survives


def test_perturbed_writes_into_the_given_buffers():
    base = [torch.randn(64)]
    buffer = [torch.empty(64)]
    address = buffer[0].data_ptr()
    out = perturbed(torch, base, 7, into=buffer)
    assert out[0].data_ptr() == address
    assert torch.equal(out[0], perturbed(torch, base, 7)[0])


def test_every_timed_call_sees_inputs_no_call_saw_before():
    seen = []

    def model(x):
        seen.append(x.clone())
        return x * 2

    sets = [[torch.randn(32)], [torch.randn(32)]]
    timer = Timer(torch, "cpu", model, sets)
    timer.warm_up(0.0, 2)
    kept = []
    times, full = timer.block(20, sample_p=1.0, keep=lambda *call: kept.append(call))
    assert len(times) == 20 and full == 0 and all(t >= 0 for t in times)
    keys = {tuple(x.tolist()) for x in seen}
    # Two warm-up calls, 20 timed ones, and an untimed call after each kept one: all distinct.
    assert len(keys) == len(seen) == 2 + 20 + 20
    # What the referee needs to rebuild a kept call's inputs, and they do rebuild it.
    index, set_index, seed, out = kept[5]
    assert index == 2 + 2 * 5
    rebuilt = perturbed(torch, sets[set_index], seed)
    assert torch.equal(rebuilt[0] * 2, out)


def test_sampling_keeps_about_the_asked_share_and_none_at_zero():
    timer = Timer(torch, "cpu", lambda x: x + 1, [[torch.randn(8)]])
    kept = []
    timer.block(400, sample_p=0.25, keep=lambda *call: kept.append(call))
    assert 50 < len(kept) < 150
    kept.clear()
    timer.block(50, sample_p=0.0, keep=lambda *call: kept.append(call))
    assert kept == []


class _FakeDevice:
    """A one-stream timeline for Hold.calibrate: a hold of `ns` takes `per_element` times as long
    (each thread runs the function on several elements in turn); a kernel on another stream ends
    at the hold's end when the hold fills the device, else a few us after its start."""

    def __init__(self, per_element=4.0, exclusive_from=4):
        self.now, self.per_element, self.exclusive_from = 0.0, per_element, exclusive_from
        self.hold_start = self.hold_end = 0.0
        self.slots = 132 * 2048
        device = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = device.side_at if device.on_side else device.now

            def elapsed_time(self, other):
                return (other.at - self.at) / 1e3

        class Props:
            multi_processor_count = 132
            max_threads_per_multi_processor = 2048

        class Cuda:
            @staticmethod
            def Stream(priority=0):
                assert priority < 0  # the probe must run at the highest priority
                return object()

            @staticmethod
            def stream(_):
                class Switch:
                    def __enter__(self):
                        device.on_side = True

                    def __exit__(self, *exc):
                        device.on_side = False
                return Switch()

            @staticmethod
            def current_device():
                return 0

            @staticmethod
            def get_device_properties(_):
                return Props()

            @staticmethod
            def synchronize():
                pass

            class jiterator:
                @staticmethod
                def _create_jit_fn(source, **kwargs):
                    assert "globaltimer" in source and kwargs == {"ns": 0.0}

                    def fn(buf, ns):
                        device.buf_elements = buf.n
                        device.hold_start = device.now + 2.0  # launch latency
                        device.hold_end = device.hold_start + ns / 1e3 * device.per_element
                        device.now = device.hold_end
                    return fn

        Cuda.Event = Event
        self.cuda, self.on_side, self.side_at, self.buf_elements = Cuda, False, 0.0, 0

    def zeros(self, n, device=None):
        fake = self

        class Tensor:
            def __init__(self):
                self.n = n

            def add_(self, _):  # the probe kernel on the other stream
                exclusive = fake.buf_elements >= fake.exclusive_from * fake.slots
                fake.side_at = fake.hold_end if exclusive else fake.hold_start + 5.0
        return Tensor()


def test_the_hold_is_calibrated_to_real_time_and_kept_only_where_it_fills_the_device():
    from kernelpro_worker.timing import Hold

    exclusive = _FakeDevice(per_element=4.0, exclusive_from=4)
    hold = Hold(exclusive)
    assert hold.calibrate() == ""
    assert abs(hold.scale - 4.0) < 1e-6
    start = exclusive.now
    hold.launch(100)
    assert abs(exclusive.now - start - 102.0) < 1e-6  # 100 us asked, 100 us held (+ latency)

    # Filled only with twice the elements: the first size is given up, the second kept.
    doubled = _FakeDevice(per_element=8.0, exclusive_from=8)
    hold = Hold(doubled)
    assert hold.calibrate() == ""
    assert hold.buf.n == 8 * doubled.slots

    never = _FakeDevice(exclusive_from=64)
    hold = Hold(never)
    why = hold.calibrate()
    assert "another stream ran beside the hold" in why
    assert hold.buf is None


def test_without_a_hold_the_timer_says_why():
    from kernelpro_worker import timing

    class NoJiterator:
        class cuda:
            @staticmethod
            def current_device():
                return 7

    timing._HOLDS.pop(7, None)
    hold, why = timing.hold_for(NoJiterator)
    assert hold is None and "jiterator" in why
