"""timing.py on CPU: fresh inputs for every timed call, rebuilt bit for bit by the referee."""

import os

import torch

from kernelpro_worker.timing import MARKER_BYTES, SCALE_LOW, Timer, perturbed, split


def attribute(events, harness_stream, calls):
    """`split`'s calls as (start_ns, end_ns, records) of their whole work, None when none."""
    records, foreign, problem = split(events, harness_stream, calls)
    if problem:
        return None, None, problem
    return ([(min(e["start_ns"] for e in r), max(e["end_ns"] for e in r), len(r)) if r else None
             for r in records], foreign, "")


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


def test_perturbed_bits_are_base_times_the_seeded_factors():
    # What any older or other reader of (set, seed) computes: base * factors drawn from the seed.
    x = torch.randn(257)
    g = torch.Generator()
    g.manual_seed((99 * 1009 + 0) % (1 << 63))
    factors = torch.empty_like(x).uniform_(SCALE_LOW, 1.0, generator=g)
    assert torch.equal(perturbed(torch, [x], 99)[0], x * factors)
    assert torch.equal(perturbed(torch, [x], 99, into=[torch.empty(257)])[0], x * factors)


def test_sets_of_the_same_shapes_share_one_buffer_each_call_refills():
    # A problem with 6 GiB inputs must not hold a copy per timing set.
    sets = [[torch.randn(16), 2], [torch.randn(16), 3], [torch.randn(4, 4), 2]]
    timer = Timer(torch, "cpu", lambda x, k: x * k, sets)
    assert timer.buffers[0][0] is timer.buffers[1][0]
    assert timer.buffers[2][0] is not timer.buffers[0][0]
    assert timer.buffers[1][1] == 3  # values that are not tensors stay each set's own
    kept = []
    timer.block(30, sample_p=1.0, keep=lambda *call: kept.append(call))
    for index, set_index, seed, out in kept:
        rebuilt = perturbed(torch, sets[set_index], seed)
        assert torch.equal(rebuilt[0] * sets[set_index][1], out)


def test_every_timed_call_sees_inputs_no_call_saw_before():
    seen = []

    def model(x):
        seen.append(x.clone())
        return x * 2

    sets = [[torch.randn(32)], [torch.randn(32)]]
    timer = Timer(torch, "cpu", model, sets)
    timer.warm_up(0.0, 2)
    kept = []
    block = timer.block(20, sample_p=1.0, keep=lambda *call: kept.append(call))
    times = block["times_ms"]
    assert len(times) == 20 and all(t >= 0 for t in times)
    assert block["host_ms"] == times and block["method"] == "host perf_counter around the call"
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


def _marker(correlation, stream=9):
    return {"correlation": correlation, "stream": stream, "start_ns": 0, "end_ns": 1,
            "bytes": MARKER_BYTES, "name": "Memcpy HtoD (Pinned -> Device)"}


def _work(correlation, start, end, stream=7, name="kernel"):
    return {"correlation": correlation, "stream": stream, "start_ns": start, "end_ns": end,
            "bytes": 0, "name": name}


def test_a_calls_time_is_the_span_of_its_work_on_every_stream_between_its_markers():
    events = [
        _marker(10), _work(11, 0, 5, stream=9),  # the harness's own flush: never a call's
        _work(12, 1000, 1400), _work(13, 1500, 1700, stream=8),  # call 0: two streams, a gap
        _marker(20), _work(21, 5000, 5300),                      # call 1
        _marker(30), _work(31, 9000, 9100, stream=9),            # call 2: no work of its own
        _marker(40),
    ]
    spans, foreign, problem = attribute(events, 9, 3)
    assert problem == ""
    assert spans[0] == (1000, 1700, 2)  # first start to last end, the gap between them included
    assert spans[1] == (5000, 5300, 1)
    assert spans[2] is None  # launched nothing: the timer falls back to the host's time
    assert foreign == [0, 0, 0]


def test_work_launched_outside_every_call_is_counted_in_the_nearest_call_and_said():
    events = [_work(5, 100, 900), _marker(10), _work(12, 1000, 1100), _marker(20),
              _work(22, 2000, 2100), _marker(30), _work(35, 3000, 3900, stream=3)]
    spans, foreign, problem = attribute(events, 9, 2)
    assert problem == ""
    assert spans[0] == (100, 1100, 2) and foreign[0] == 1  # a head start counts for the call
    assert spans[1] == (2000, 3900, 2) and foreign[1] == 1  # late work too


def test_a_block_whose_markers_are_missing_is_not_split_by_guesswork():
    events = [_marker(10), _work(12, 1000, 1100), _work(22, 2000, 2100), _marker(30)]
    spans, foreign, problem = attribute(events, 9, 2)
    assert spans is None and "2 of the 3 markers" in problem
    # A copy of the marker's size on another stream is not a marker: it is the call's work.
    forged = [_marker(10), _work(12, 1000, 1100), _marker(15, stream=4), _marker(20),
              _work(22, 2000, 2100), _marker(30)]
    spans, foreign, problem = attribute(forged, 9, 2)
    assert problem == "" and spans[0] == (0, 1100, 2) and spans[1] == (2000, 2100, 1)


def test_without_the_profilers_records_the_timer_says_what_it_used_instead():
    timer = Timer.__new__(Timer)
    timer.cuda, timer.tracer, timer.tracer_note = True, None, "the profiler's records held no kernel"
    assert timer.method.startswith("cuda events around the call")
    assert "count the host's time to launch the call" in timer.method
    assert timer.method.endswith("(the device's activity records could not be used: the "
                                 "profiler's records held no kernel)")


def test_a_timer_names_its_attributes_rebound_by_code_in_its_process():
    import torch

    from kernelpro_worker.timing import Timer

    timer = Timer(torch, "cpu", torch.nn.Identity(), [[torch.ones(4)]], perturb=False, spans=False)
    timer.warm_up(0.0, 2)
    timer.block(3)
    assert timer.rebound() == []  # its own counters and clocks change as it works
    run = timer._run
    timer.__dict__["_run"] = lambda calls, sample_p, keep: run(calls, sample_p, keep)
    timer.perf = lambda: 0.0
    assert timer.rebound() == ["Timer._run", "Timer.perf"]


def test_events_the_harness_asked_for_are_not_called_unusable_records():
    from kernelpro_worker.timing import EVENTS_ASKED

    timer = Timer.__new__(Timer)
    timer.cuda, timer.tracer, timer.tracer_note = True, None, EVENTS_ASKED
    assert "could not be used" not in timer.method
    assert timer.method.endswith("(events were asked for: the device's activity records could "
                                 "not be read in one of the evaluation's processes)")


def test_the_sm_clock_is_read_from_the_nvml_library_the_request_names(fake_nvml, monkeypatch):
    """As energy.py does: the library comes with the request (session.py hands a time request's
    `nvml_library` to its Timer), never from the worker's environment."""
    from kernelpro_worker import timing

    for name in list(os.environ):
        if name.startswith("FAKE_NVML_"):
            monkeypatch.delenv(name)
    monkeypatch.setattr(timing, "_CLOCKS", {})
    monkeypatch.setenv("KERNELPRO_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    reader = timing.clock_reader(fake_nvml)
    assert reader.note == ""
    assert reader.sm_mhz() == 1980  # the fake's clock
    assert timing.clock_reader(fake_nvml) is reader  # one per library and process
    # A request that names none gets the driver's library, whatever the environment says.
    monkeypatch.setenv("KERNELPRO_NVML_LIBRARY", fake_nvml)
    default = timing.clock_reader(None)
    assert default is not reader
    assert default.nvml is None or default.nvml.library != fake_nvml
