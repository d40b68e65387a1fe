"""Timing forward calls: one loop for the reference (in the referee) and the candidate.

Every timed call gets input values that no earlier call of any process has seen: before the
call, outside the timed span, the call's input buffers are refilled from one of the problem's
timing input sets with each floating-point element scaled by its own factor in [0.5, 1) drawn
from a seed made then (os.urandom). The buffers stay the same (a cache keyed on their addresses
sees new values behind the same pointers), the values are new (a cache keyed on their contents
never hits), and the seed does not exist before the call it is for (no precomputing ahead).
Signs, zeros, ordering and bounds such as |x| < 1 or x > 0 survive the scaling, so the inputs
stay in the problem's domain; integer and boolean inputs are copied as they are.

After a call, with probability `sample_p` decided only then, its outputs are kept for the
referee, which rebuilds the same inputs from (set, seed) with `perturbed` and compares the
reference's outputs on them: a candidate that replays, caches or skips work on some calls is
caught on a sample of exactly those calls.

On CUDA a call's time is the span of its GPU work on every stream: from the start of its first
kernel, copy or memset to the end of its last, read from the profiler's activity records (CUPTI,
through torch.profiler's kineto results). Everything the harness does on the device (the refill,
the L2 flush, the marker, keeping a sampled call's outputs) runs on a private stream of its own,
and the device is synchronised before the call and after it, so the span holds the call's work and
nothing else; the host's time before the call's first launch is not in it. Each timed call's
launches are queued behind a gate (gate.py: a spin kernel on the call's stream), so the gaps
between its kernels are the device's own, not the host's time to launch them; whether the gate
held is checked for every call, and a call it cannot hold is timed ungated and said so. The busy
time (the union of the call's kernel, copy and memset intervals) is returned beside the span.
Each call is preceded by a marker (a small host-to-device copy on the private
stream): CUPTI numbers every launch in order, from any thread, so every device record whose launch
falls between two markers belongs to the call between them (`split`). Work that no call
launched (a thread of the candidate's, launching between calls) is counted in the call it is found
beside and the result says so (`foreign_calls`). A call that launched no device work at all is
timed by the host (`no_device_work_calls`).

The host-inclusive time of a call (from calling forward to the end of the device
synchronisation after it, as KernelBench counts it) is returned beside the span: the ungated
(warm-up) calls' since the last block, as gated calls wait behind the gate; so is the host's time
to launch each timed call. Where the profiler's records cannot be had, calls are timed with
CUDA events around the call on an idle device, which counts the host's launch time, and the
method says so and why.

The SM clock (NVML, from the library the request's `nvml_library` names, else the driver's) is
read before and after every block; a block timed below nine tenths of the
clock the warm-up reached is timed again once after a short warm-up, and flagged if it is still
low (`low_clock_blocks`). The card's clocks are never changed.
"""

import os
import time
from bisect import bisect_right

from .gate import RETRIES as GATE_RETRIES
from .gate import Gate, launched_after_release, read_call

SCALE_LOW = 0.5  # factors are drawn from [SCALE_LOW, 1)
MARKER_BYTES = 4093  # the size of the harness's marker copy (odd, so no tensor of work has it)
LOW_CLOCK = 0.9  # a block below this share of the warm-up's SM clock is timed again
EVENTS_ASKED = "events asked for"  # the tracer's note when the request asked for events


def _is_marker(event, harness_stream=None):
    """The harness's marker: a host-to-device copy (its only one) on the harness's stream."""
    return ((harness_stream is None or event["stream"] == harness_stream)
            and event["name"].startswith("Memcpy HtoD")
            and event["bytes"] in (0, MARKER_BYTES))


def split(events, harness_stream, calls):
    """Splits a block's device records among its calls.

    `events`: dicts {correlation, stream, start_ns, end_ns, bytes, name} of every kernel, copy and
    memset of the block (annotations left out). The harness's markers (MARKER_BYTES copies on
    `harness_stream`) open the calls: `calls` + 1 of them, one before each call and one after the
    last. Returns (records, foreign, problem): records[i] = the records of call i's work (a list,
    empty when it launched none); foreign[i] = how many records of call i were launched outside
    its window (before the block's first marker or after its last); problem = "" or why the
    records cannot be split (the markers are not all there)."""
    markers = sorted(e["correlation"] for e in events if _is_marker(e, harness_stream))
    if len(markers) != calls + 1:
        return None, None, (f"{len(markers)} of the {calls + 1} markers were in the profiler's "
                            "records")
    records = [[] for _ in range(calls)]
    foreign = [0] * calls
    for e in events:
        if e["stream"] == harness_stream:
            continue
        i = bisect_right(markers, e["correlation"]) - 1
        if not 0 <= i < calls:  # before the first marker or after the last: the nearest call
            i = min(max(i, 0), calls - 1)
            foreign[i] += 1
        records[i].append(e)
    return records, foreign, ""


def _device_records(torch, result):
    """The kernels, copies and memsets of a kineto result as `split` takes them."""
    cuda = torch.autograd.DeviceType.CUDA
    out = []
    for e in result.events():
        if e.device_type() != cuda or e.is_user_annotation():
            continue
        nbytes = e.nbytes() if hasattr(e, "nbytes") else 0
        out.append({"correlation": e.correlation_id(), "stream": e.device_resource_id(),
                    "start_ns": e.start_ns(), "end_ns": e.end_ns(), "bytes": nbytes,
                    "name": e.name()})
    return out


def _launch_ends(torch, result):
    """{correlation: end_ns} of the host's runtime-API calls (cudaLaunchKernel, cudaMemcpyAsync,
    ...) among a kineto result's records: when each launch returned. Empty when the profiler kept
    none (a check the gate's event already makes; this one is reported beside it)."""
    cuda = torch.autograd.DeviceType.CUDA
    ends = {}
    for e in result.events():
        if e.device_type() == cuda or e.is_user_annotation():
            continue
        name = e.name()
        if name.startswith(("cuda", "cu")) and e.correlation_id():
            ends[e.correlation_id()] = e.end_ns()
    return ends


class SpanTracer:
    """CUPTI activity records of the device's work, through torch.profiler, one block at a time;
    the harness's private stream and its markers. `calibrate()` finds the private stream's id in
    the records and returns "" or why the records cannot be used."""

    def __init__(self, torch):
        self.torch = torch
        self.stream = torch.cuda.Stream()
        self.source = torch.zeros(MARKER_BYTES, dtype=torch.uint8).pin_memory()
        self.target = torch.zeros(MARKER_BYTES, dtype=torch.uint8, device="cuda")
        self.profile = torch.profiler.profile
        self.activities = [torch.profiler.ProfilerActivity.CUDA]
        self.stream_id = None
        self.active = None
        self.launch_ends = {}  # the last block's runtime-API calls: correlation -> end_ns

    def mark(self):
        with self.torch.cuda.stream(self.stream):
            self.target.copy_(self.source, non_blocking=True)

    def open(self):
        self.active = self.profile(activities=self.activities)
        self.active.__enter__()

    def close(self):
        """Stops the profiler; returns the block's device records."""
        profiler, self.active = self.active, None
        profiler.__exit__(None, None, None)
        results = profiler.profiler.kineto_results
        try:
            self.launch_ends = _launch_ends(self.torch, results)
        except Exception:  # noqa: BLE001 - only a cross-check: its absence is said
            self.launch_ends = {}
        return _device_records(self.torch, results)

    def calibrate(self):
        torch = self.torch
        try:
            torch.cuda.synchronize()
            self.open()
            self.mark()
            torch.zeros(16, device="cuda").add_(1)
            self.mark()
            torch.cuda.synchronize()
            records = self.close()
        except Exception as e:  # noqa: BLE001 - no kineto, no CUPTI: the caller says why
            self.active = None
            return ("torch.profiler could not record the device's activity "
                    f"({type(e).__name__}: {e})")
        marks = [e for e in records if _is_marker(e)]
        streams = {e["stream"] for e in marks}
        if len(marks) != 2 or len(streams) != 1:
            seen = sorted({f"{e['name'][:40]} {e['bytes']}" for e in records})
            return (f"the profiler's records held {len(marks)} of the 2 marker copies "
                    f"({len(records)} device records in all: {', '.join(seen)})")
        work = [e for e in records if e not in marks]
        if not work:
            return "the profiler's records held no kernel"
        self.stream_id = streams.pop()
        return ""


_TRACERS = {}  # device index -> SpanTracer, or the reason there is none; one per process


def tracer_for(torch):
    """This process's calibrated SpanTracer for the current device and "", or None and why not."""
    key = torch.cuda.current_device()
    if key not in _TRACERS:
        try:
            tracer = SpanTracer(torch)
            why = tracer.calibrate()
        except Exception as e:  # noqa: BLE001 - no pinned memory, no profiler: no spans
            why = f"{type(e).__name__}: {e}"
        _TRACERS[key] = why or tracer
    found = _TRACERS[key]
    return (found, "") if isinstance(found, SpanTracer) else (None, found)


class ClockReader:
    """The SM clock of this process's GPU, from NVML (read only; nothing is ever set): from the
    library `nvml_library` names (a request's, as energy.py takes it), else the driver's."""

    def __init__(self, nvml_library=None):
        self.nvml, self.note = None, ""
        try:
            from .energy import Nvml, device_index

            self.nvml = Nvml(nvml_library or None, device_index())
        except Exception as e:  # noqa: BLE001 - no driver library, a refused call: said, not fatal
            self.note = f"the SM clock could not be read ({getattr(e, 'message', None) or e})"

    def sm_mhz(self):
        if self.nvml is None:
            return None
        try:
            return self.nvml.sm_mhz()
        except Exception as e:  # noqa: BLE001
            self.nvml, self.note = None, f"the SM clock could not be read ({e})"
            return None


_CLOCKS = {}  # NVML library ("" = the driver's) -> its ClockReader; one each per process


def clock_reader(nvml_library=None):
    key = nvml_library or ""
    if key not in _CLOCKS:
        _CLOCKS[key] = ClockReader(key or None)
    return _CLOCKS[key]


# A Timer's attributes that change as it works; every other one must stay as it was made.
_TIMER_STATE = {"calls", "warmup_calls", "tracing", "last_records", "warm_mhz", "_made"}
_GONE = object()


def perturbed(torch, base, seed, into=None):
    """`base` (a list of inputs) with every floating-point tensor's elements scaled by factors
    in [0.5, 1) from `seed`; the same (base, seed) gives the same bits in any process on the same
    device. Written into `into` (same shapes) when given, else into new tensors: the factors are
    drawn into the destination and multiplied by base there (the product is the same bits either
    way round), so no memory beyond the destination is needed."""
    out = []
    for i, x in enumerate(base):
        dst = into[i] if into is not None else None
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            g = torch.Generator(device=x.device)
            g.manual_seed((seed * 1009 + i) % (1 << 63))
            if dst is None:
                dst = torch.empty_like(x)
            dst.uniform_(SCALE_LOW, 1.0, generator=g)
            dst.mul_(x)
        elif isinstance(x, torch.Tensor):
            if dst is None:
                dst = x.clone()
            else:
                dst.copy_(x)
        else:
            dst = x
        out.append(dst)
    return out


def shared_buffers(torch, base_sets, clone):
    """The buffers each input set is refilled into before a call, made with `clone` (the timer's,
    bound before any candidate code ran). Every call refills them, so a tensor of the same
    position, shape, dtype and layout in several sets needs one buffer, not one per set (a
    problem whose inputs are 6 GiB would otherwise hold a copy per set); values that are not
    tensors stay each set's own."""
    made = {}

    def buffer(i, x):
        if not isinstance(x, torch.Tensor):
            return x
        key = (i, tuple(x.shape), x.dtype, str(x.device), tuple(x.stride()))
        if key not in made:
            made[key] = clone(x)
        return made[key]

    return [[buffer(i, x) for i, x in enumerate(base)] for base in base_sets]


class Timer:
    """Times `model(*args)` (without autograd) on buffers refilled from `base_sets` before every
    call. `block` returns a dict: times_ms (the calls' times: the gated device span on CUDA, the
    host's on the CPU), busy_ms, host_ms, launch_us, the gate's facts and what happened (see the
    module's docstring and gate.py)."""

    def __init__(self, torch, device, model, base_sets, flush_bytes=-1, perturb=True, spans=True,
                 gate=True, buffers=None, nvml_library=None):
        self.torch, self.cuda, self.model = torch, device == "cuda", model
        self.no_grad = torch.no_grad
        self.base_sets = base_sets
        self.perturb = perturb
        # Bound now: a candidate in this process cannot rebind what the loop calls.
        self.perf, self.urandom = time.perf_counter, os.urandom
        self.clone = torch.Tensor.clone
        # Refilled before every call; sets of the same shapes share them, and a second timer of
        # the same sets in this process may share another's (`buffers`): they never run at once.
        self.buffers = (buffers if buffers is not None
                        else shared_buffers(torch, base_sets, self.clone))
        self.flush = None
        self.tracer, self.tracer_note = None, ""
        self.clock, self.warm_mhz = None, None
        self.gate, self.gate_note = None, "" if self.cuda else "no gate on the CPU"
        self.ungated_host = []  # host-inclusive times of ungated calls since the last block (ms)
        if self.cuda:
            self.tracer, self.tracer_note = tracer_for(torch) if spans else (None, EVENTS_ASKED)
            self.stream = self.tracer.stream if self.tracer is not None else torch.cuda.Stream()
            self.stream_context = torch.cuda.stream
            self.Event, self.synchronize = torch.cuda.Event, torch.cuda.synchronize
            self.clock = clock_reader(nvml_library)
            if gate:
                try:
                    self.gate = Gate(torch, self.clock.sm_mhz())
                except Exception as e:  # noqa: BLE001 - no torch.cuda._sleep: ungated, and said
                    self.gate_note = f"the gate could not be made ({type(e).__name__}: {e})"
            else:
                self.gate_note = "the gate was not asked for"
            if flush_bytes < 0:  # twice the L2, so no input survives in cache between calls
                l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (128 << 20)
                flush_bytes = 2 * l2
            if flush_bytes > 0:
                self.flush = torch.empty(int(flush_bytes), dtype=torch.int8, device=device)
        self.calls = 0           # every call made, warm-up included (the index of the next)
        self.warmup_calls = 0
        self.tracing = False     # inside a block's profiler window: each call gets a marker
        self.last_records = []   # the device records of the last block (doctor --timing reads them)
        # Everything else it holds, as made: what rebound() compares (the objects, not their ids).
        self._made = {k: v for k, v in vars(self).items() if k not in _TIMER_STATE}

    def _seed(self):
        return int.from_bytes(self.urandom(8), "little") >> 2

    def _refill(self, set_index, seed):
        torch = self.torch
        base = self.base_sets[set_index]
        buffers = self.buffers[set_index]
        if self.perturb:
            perturbed(torch, base, seed, into=buffers)
        else:
            for dst, src in zip(buffers, base):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src)
        return buffers

    def rebound(self):
        """This timer's attributes that code in its process rebound, removed or added since it
        was made (its clocks, tracer, buffers, model; an instance `_run` over its class's): a
        candidate that walks up its stack to the timer can forge its rows without touching any
        module or class the patch guard watches (guard.py). Sorted names; [] when untouched."""
        now, made = vars(self), self._made
        return sorted(f"Timer.{k}" for k in now.keys() | made.keys()
                      if k not in _TIMER_STATE and now.get(k, _GONE) is not made.get(k, _GONE))

    def forward(self, args):
        with self.no_grad():
            return self.model(*args)

    def prepare(self):
        """What comes before every call: its inputs refilled and, on CUDA, the L2 flushed and
        (inside a block) the marker, all on the harness's stream, then the device idle. Returns
        (set, seed, args)."""
        set_index = self.calls % len(self.base_sets)
        seed = self._seed()
        self.calls += 1
        if not self.cuda:
            return set_index, seed, self._refill(set_index, seed)
        with self.stream_context(self.stream):  # the harness's own work, on its own stream
            args = self._refill(set_index, seed)
            if self.flush is not None:
                self.flush.zero_()
            if self.tracing:
                self.tracer.mark()
            ready = self.Event()
            ready.record()
        # Polled rather than waited for: the host thread is not put to sleep right before the
        # call it launches. Then the whole device: the call's work starts with the call.
        while not ready.query():
            pass
        self.synchronize()
        return set_index, seed, args

    def _one(self, gated=False):
        """One call on fresh inputs: (set, seed, outputs, host_ms, launch_s, event_ms, early);
        host_ms from calling forward to the end of the device's work, launch_s to forward's return
        (None on the CPU), event_ms the events' time where the device's records are not used,
        early whether a gated call's gate had already ended when forward returned. A gated call
        waits behind the gate (gate.py): its host_ms holds the gate and is not reported."""
        set_index, seed, args = self.prepare()
        if not self.cuda:
            t0 = self.perf()
            out = self.forward(args)
            return set_index, seed, out, (self.perf() - t0) * 1e3, None, None, False
        released = self.gate.close() if gated else None
        events = self.tracer is None
        if events:
            begin, end = self.Event(enable_timing=True), self.Event(enable_timing=True)
            begin.record()
        t0 = self.perf()
        out = self.forward(args)
        t1 = self.perf()
        early = released is not None and released.query()
        if events:
            end.record()
        self.synchronize()  # every stream: the call's work is done
        t2 = self.perf()
        if not gated and self.calls > 2:  # the first calls load modules: not the call's time
            self.ungated_host.append((t2 - t0) * 1e3)
            if self.gate is not None:
                self.gate.saw_launch((t1 - t0) * 1e6)
        return (set_index, seed, out, (t2 - t0) * 1e3, t1 - t0,
                begin.elapsed_time(end) if events else None, early)

    def warm_up(self, seconds, min_calls):
        """Untimed, ungated calls: module load, autotuning and allocator growth stay out of the
        numbers, the GPU leaves its idle clocks, and the host-inclusive times and launch times
        are read; the SM clock reached is read at the end."""
        if not self.cuda:
            seconds = min(seconds, 0.05)  # no clocks to ramp up; caches and the allocator only
        start = self.perf()
        n = 0
        while n < min_calls or self.perf() - start < seconds:
            self._one()
            n += 1
            if n >= min_calls and self.perf() - start > 10 * max(seconds, 0.5):
                break
        if self.clock is not None and (seconds > 0 or self.warm_mhz is None):
            mhz = self.clock.sm_mhz()
            if mhz is not None:
                self.warm_mhz = max(self.warm_mhz or 0, mhz)
        self.warmup_calls += n
        return n

    def _run(self, calls, sample_p, keep, gated):
        """`calls` timed calls (and an untimed one after each kept call): the per-call rows."""
        rows = []  # (timed, host_ms, launch_s, event_ms, early)
        for _ in range(calls):
            index = self.calls
            set_index, seed, out, host_ms, launch_s, event_ms, early = self._one(gated)
            rows.append((True, host_ms, launch_s, event_ms, early))
            if keep is not None and sample_p > 0:
                draw = int.from_bytes(self.urandom(4), "little") / 2**32
                if draw < sample_p:
                    if self.cuda:
                        with self.stream_context(self.stream):  # outside every call's span
                            keep(index, set_index, seed, out)
                    else:
                        keep(index, set_index, seed, out)
                    # Keeping (a copy, a file) disturbs caches and clocks: one untimed call
                    # before the next timed one, so the sampled calls' neighbours pay nothing.
                    del out
                    rows.append((False,) + self._one()[3:])
                    self.warmup_calls += 1
                    continue
            del out
        return rows

    def _traced(self, calls, sample_p, keep, gated):
        """A block inside the profiler: (rows, per-call gate.read_call, foreign, problem,
        gate.launched_after_release of its timed calls or None)."""
        self.tracer.open()
        self.tracing = True
        try:
            rows = self._run(calls, sample_p, keep, gated)
            self.tracer.mark()
            self.synchronize()
        finally:
            self.tracing = False
            records = self.tracer.close()
        self.last_records = records
        per_call, foreign, problem = split(records, self.tracer.stream_id, len(rows))
        if problem:
            return rows, None, foreign, problem, None
        # Untimed calls (after a kept sample) were not gated.
        read = [read_call(r, gated and row[0]) for r, row in zip(per_call, rows)]
        late = (launched_after_release([r for r, row in zip(per_call, rows) if row[0]],
                                       getattr(self.tracer, "launch_ends", {}))
                if gated else None)
        return rows, read, foreign, problem, late

    def _gate_missed(self, rows, read):
        """Why the gate did not hold some timed call of the block, or ""."""
        late = sum(1 for row in rows if row[0] and row[4])
        early = sum(1 for row, r in zip(rows, read or [None] * len(rows))
                    if row[0] and r is not None and r["early"] > 0)
        if not late and not early:
            return ""
        parts = []
        if late:
            parts.append(f"{late} call(s) were still launching when the gate ended (forward "
                         "waits on the device inside, or launches for longer than the gate)")
        if early:
            parts.append(f"{early} call(s) had device work that started before the gate ended "
                         "(work on a stream the gate does not hold)")
        return "; ".join(parts)

    def block(self, calls, sample_p=0.0, keep=None):
        """`calls` timed calls. `keep(call_index, set_index, seed, outputs)` is called for the
        calls drawn into the sample (probability sample_p each, drawn after the call)."""
        result = {"no_device_work_calls": 0, "foreign_calls": 0, "low_clock_blocks": 0,
                  "repeated_blocks": 0, "gate_retries": 0}
        record_attempts = 0
        while True:
            gated = self.gate is not None and self.gate.on
            if gated:
                self.gate.size()
            asked_cycles = self.gate.cycles() if gated else 0
            before = self.clock.sm_mhz() if self.clock is not None else None
            read = foreign = runtime_late = None
            if self.tracer is not None:
                rows, read, foreign, problem, runtime_late = self._traced(calls, sample_p, keep,
                                                                          gated)
                if problem:
                    record_attempts += 1
                    if record_attempts < 2:
                        continue
                    raise RuntimeError("the device's activity records of a timed block were "
                                       f"incomplete twice: {problem}")
                if gated:
                    self.gate.calibrate([r["gate_ns"][1] - r["gate_ns"][0] for r in read
                                         if r["gate_ns"]], asked_cycles)
            else:
                rows = self._run(calls, sample_p, keep, gated)
            if gated:
                missed = self._gate_missed(rows, read)
                if missed:
                    result["gate_retries"] += 1
                    if result["gate_retries"] <= GATE_RETRIES and self.gate.lengthen():
                        continue  # the same block again behind a gate four times as long
                    self.gate.turn_off(
                        f"the gate did not hold at {self.gate.length_us:.0f} us: {missed}; "
                        "calls are timed without it, the host's launch gaps included")
                    continue  # the block again, ungated
            after = self.clock.sm_mhz() if self.clock is not None else None
            low = (self.warm_mhz is not None and before is not None and after is not None
                   and min(before, after) < LOW_CLOCK * self.warm_mhz)
            if low and result["repeated_blocks"] == 0:
                result["repeated_blocks"] = 1
                self.warm_up(0.05, 1)
                continue
            break
        times, busy, host, launch = [], [], [], []
        for i, (timed, host_ms, launch_s, event_ms, _) in enumerate(rows):
            if not timed:
                continue
            if not gated:
                host.append(host_ms)
            if launch_s is not None:
                launch.append(launch_s * 1e6)
            if read is not None:
                call = read[i]
                if call["span_ns"] is None:  # no device work: the host's time is all it took
                    result["no_device_work_calls"] += 1
                    times.append(launch_s * 1e3 if gated else host_ms)
                    busy.append(0.0)
                else:
                    times.append((call["span_ns"][1] - call["span_ns"][0]) / 1e6)
                    busy.append(call["busy_ns"] / 1e6)
                    result["foreign_calls"] += foreign[i] > 0
            else:
                times.append(event_ms if event_ms is not None else host_ms)
        if gated:  # the gated calls' host times hold the gate: the ungated calls' instead
            host = list(self.ungated_host)
        self.ungated_host.clear()
        result.update(times_ms=times, host_ms=host, launch_us=launch,
                      sm_mhz=[m for m in (before, after) if m is not None],
                      warm_sm_mhz=self.warm_mhz, low_clock_blocks=int(bool(low)),
                      method=self.method, clock_note=self.clock.note if self.clock else "",
                      spans=self.tracer is not None, spans_note=self.tracer_note)
        if read is not None:
            result["busy_ms"] = busy
        if self.cuda:
            result.update(gate_held=gated, gate_note=self.gate_note if self.gate is None
                          else self.gate.note,
                          gate_us=round(self.gate.length_us, 1) if gated else None,
                          gate_runtime_late=runtime_late)
        return result

    @property
    def method(self):
        if not self.cuda:
            return "host perf_counter around the call"
        gate = getattr(self, "gate", None)
        gated = gate is not None and gate.on
        if self.tracer is not None:
            if gated:
                return ("span of the call's device work on every stream (first kernel or copy "
                        "start to last end) from CUPTI activity records, the call's launches "
                        "queued behind a gate so no host launch gap is in it, L2 flushed and the "
                        "device idle before the call")
            return ("span of the call's device work on every stream (first kernel or copy start "
                    "to last end) from CUPTI activity records, L2 flushed and the device idle "
                    "before the call; the host's time before the first launch is not counted, "
                    "the gaps between the call's launches are (ungated: "
                    f"{gate.note if gate is not None else self.gate_note})")
        why = ("events were asked for: the device's activity records could not be read in one "
               "of the evaluation's processes" if self.tracer_note == EVENTS_ASKED else
               f"the device's activity records could not be used: {self.tracer_note}")
        return ("cuda events around the call on an idle device after the L2 flush"
                + (", the call's launches queued behind a gate" if gated else
                   ", which count the host's time to launch the call") + f" ({why})")
