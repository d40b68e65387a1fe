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
