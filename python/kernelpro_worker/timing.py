"""Timing forward calls: one loop for the reference (in the referee) and the candidate.

Every timed call gets input values that no earlier call of any process has seen: before the
call, outside the timed window, the call's input buffers are refilled from one of the problem's
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

On CUDA the call is timed with events on the stream it ran on (begin before the call, end right
after it returns), so the host's synchronisation is not in the number and kernels of 3 us time
as 3 us. Work the call leaves running on other streams is not in that interval: after the end
event completes, the whole device is synchronised and, when that wait is longer than an idle
device's (calibrated in the warm-up), the call is timed in full instead (begin to after the
device synchronisation) and counted in `full_calls`; the verdict then carries a warning.

The call is made while the device is held (`Hold`): after the L2 flush, a kernel occupies every
multiprocessor for HOLD_US, and the host calls forward only once the flush is done and the hold
runs. So the host's launch time is not in the number up to HOLD_US (the call's first kernel is
queued before the begin event passes; a forward that needs longer to launch is counted for the
rest, as a host-bound call should be), the device stays busy between calls (no idle-clock dips on
short kernels), and nothing the call starts can run before the begin event: work launched on another
stream that does not wait for the calling stream (a head start on the flush, which the inputs'
refill precedes) waits for the hold like everything else. Where the hold cannot be made (no
jiterator, or a device where another stream's kernel was seen running beside it), the call is
timed after the flush alone and the method says so.
"""

import os
import time

SCALE_LOW = 0.5  # factors are drawn from [SCALE_LOW, 1)
HOLD_US = 100.0  # how long the device is held before each timed call

# Every thread of the hold spins on the global timer (ns) until `ns` have passed since it began.
_HOLD_SOURCE = r"""
template <typename T> T kp_hold(T x, T ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < (unsigned long long)ns);
  return x;
}
"""


class Hold:
    """A kernel that occupies every multiprocessor of the current device for a given time: torch's
    jiterator (NVRTC, compiled once per process) over enough elements to fill every thread slot,
    each thread spinning on the global timer. `calibrate` measures how long a requested time
    really takes (each thread runs the function on several elements in turn) and checks that a
    kernel launched on another stream meanwhile waits for it."""

    def __init__(self, torch):
        self.torch = torch
        # Bound before any candidate code runs in this process (the guard watches these too).
        self.fn = torch.cuda.jiterator._create_jit_fn(_HOLD_SOURCE, ns=0.0)
        self.Event = torch.cuda.Event
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        threads = getattr(props, "max_threads_per_multi_processor", 0) or 2048
        self.slots = props.multi_processor_count * threads
        self.buf = None
        self.scale = 1.0  # real time per requested time

    def launch(self, us):
        self.fn(self.buf, ns=max(1.0, float(us) * 1000.0 / self.scale))

    def before_call(self):
        """Holds the device for HOLD_US behind what the stream has queued (the L2 flush) and
        returns once that is done and the hold runs: the moment to queue a timed call."""
        gate = self.Event()
        gate.record()
        self.launch(HOLD_US)
        gate.synchronize()

    def _timed(self, us, probe=None):
        """Holds for `us`; returns (held_us, probe_done_us): when a kernel launched on another
        stream right after the hold finished, from the hold's start."""
        torch = self.torch
        event = torch.cuda.Event
        start, end = event(enable_timing=True), event(enable_timing=True)
        start.record()
        self.launch(us)
        end.record()
        probed = None
        if probe is not None:
            stream, tensor = probe
            with torch.cuda.stream(stream):
                tensor.add_(1)
                probed = event(enable_timing=True)
                probed.record()
        torch.cuda.synchronize()
        held = start.elapsed_time(end) * 1e3
        return held, (start.elapsed_time(probed) * 1e3 if probed is not None else None)

    def calibrate(self):
        """Sizes and checks the hold; returns "" or why there is none."""
        torch = self.torch
        # The probe runs on a stream of the highest priority (torch maps -100 to it): its blocks are
        # dispatched ahead of any waiting block of the hold, so only a hold whose blocks are all
        # resident at once, leaving no room, makes it wait.
        probe = (torch.cuda.Stream(priority=-100), torch.zeros(1, device="cuda"))
        with torch.cuda.stream(probe[0]):  # loaded now: a first launch can wait on module loading
            probe[1].add_(1)
        torch.cuda.synchronize()
        for elements in (4 * self.slots, 8 * self.slots, 16 * self.slots):
            self.buf = torch.zeros(elements, device="cuda")
            self.scale = 1.0
            self.launch(1.0)  # compiles
            torch.cuda.synchronize()
            short = min(self._timed(50.0)[0] for _ in range(3))
            long = min(self._timed(150.0)[0] for _ in range(3))
            if long <= short:
                return f"the hold kernel does not wait ({short:.1f} us for 50 us, {long:.1f} us for 150 us)"
            self.scale = (long - short) / 100.0
            held, probed = self._timed(2 * HOLD_US, probe)
            if probed >= 0.9 * held:
                return ""
        self.buf = None
        return (f"a kernel on another stream ran beside the hold ({probed:.0f} us into a "
                f"{held:.0f} us hold)")


_HOLDS = {}  # device index -> Hold, or the reason there is none; one per process


def hold_for(torch):
    """This process's calibrated Hold for the current device and "", or None and why not."""
    key = torch.cuda.current_device()
    if key not in _HOLDS:
        try:
            hold = Hold(torch)
            why = hold.calibrate()
            _HOLDS[key] = why or hold
        except Exception as e:  # noqa: BLE001 - no jiterator, no NVRTC, an old device: no hold
            _HOLDS[key] = f"{type(e).__name__}: {e}"
    found = _HOLDS[key]
    return (found, "") if isinstance(found, Hold) else (None, found)


def perturbed(torch, base, seed, into=None, scratch=None):
    """`base` (a list of inputs) with every floating-point tensor's elements scaled by factors
    in [0.5, 1) from `seed`; the same (base, seed) gives the same bits in any process on the same
    device. Written into `into` (same shapes) when given, else into new tensors; `scratch`
    (tensors like base's) holds the factors, else they are allocated."""
    out = []
    for i, x in enumerate(base):
        dst = into[i] if into is not None else None
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            g = torch.Generator(device=x.device)
            g.manual_seed((seed * 1009 + i) % (1 << 63))
            factor = scratch[i] if scratch is not None else torch.empty_like(x)
            factor.uniform_(SCALE_LOW, 1.0, generator=g)
            if dst is None:
                dst = x * factor
            else:
                torch.mul(x, factor, out=dst)
        elif isinstance(x, torch.Tensor):
            if dst is None:
                dst = x.clone()
            else:
                dst.copy_(x)
        else:
            dst = x
        out.append(dst)
    return out


class Timer:
    """Times `model(*args)` (without autograd) on buffers refilled from `base_sets` before every
    call."""

    def __init__(self, torch, device, model, base_sets, flush_bytes=-1, perturb=True, hold=True):
        self.torch, self.cuda, self.model = torch, device == "cuda", model
        self.no_grad = torch.no_grad
        self.base_sets = base_sets
        self.perturb = perturb
        # Bound now: a candidate in this process cannot rebind what the loop calls.
        self.perf, self.urandom = time.perf_counter, os.urandom
        self.clone = torch.Tensor.clone
        self.buffers = [[self.clone(x) if isinstance(x, torch.Tensor) else x for x in base]
                        for base in base_sets]
        self.scratch = [[torch.empty_like(x) if isinstance(x, torch.Tensor) else None for x in base]
                        for base in base_sets]
        self.flush = None
        self.hold, self.hold_note = None, ""
        self.launch_s = []  # the last block's calls: host time from begin to forward's return
        if self.cuda:
            self.hold, self.hold_note = hold_for(torch) if hold else (None, "not asked for")
            self.Event, self.synchronize = torch.cuda.Event, torch.cuda.synchronize
            if flush_bytes < 0:  # twice the L2, so no input survives in cache between calls
                l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (128 << 20)
                flush_bytes = 2 * l2
            if flush_bytes > 0:
                self.flush = torch.empty(int(flush_bytes), dtype=torch.int8, device=device)
        self.idle_sync_s = None  # an idle device's synchronize(), calibrated in warm_up
        self.idle_waits = []     # every warm-up call's synchronize() wait
        self.calls = 0           # every call made, warm-up included (the index of the next)
        self.warmup_calls = 0

    def _seed(self):
        return int.from_bytes(self.urandom(8), "little") >> 2

    def _refill(self, set_index, seed):
        torch = self.torch
        base = self.base_sets[set_index]
        buffers = self.buffers[set_index]
        if self.perturb:
            perturbed(torch, base, seed, into=buffers, scratch=self.scratch[set_index])
        else:
            for dst, src in zip(buffers, base):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src)
        return buffers

    def forward(self, args):
        with self.no_grad():
            return self.model(*args)

    def _one(self):
        """One call on fresh inputs: (set, seed, outputs, ms, full, launch_s), launch_s the
        host's time from the begin event to forward's return (CUDA; None on the CPU)."""
        set_index = self.calls % len(self.base_sets)
        seed = self._seed()
        args = self._refill(set_index, seed)
        self.calls += 1
        if not self.cuda:
            t0 = self.perf()
            out = self.forward(args)
            return set_index, seed, out, (self.perf() - t0) * 1e3, False, None
        if self.flush is not None:
            self.flush.zero_()
        if self.hold is not None:
            self.hold.before_call()
        begin, end = self.Event(enable_timing=True), self.Event(enable_timing=True)
        t_begin = self.perf()
        begin.record()
        out = self.forward(args)
        launch_s = self.perf() - t_begin
        end.record()
        end.synchronize()
        t0 = self.perf()
        self.synchronize()  # every stream: is anything of this call still running?
        waited = self.perf() - t0
        ms = begin.elapsed_time(end)
        full = False
        if self.idle_sync_s is not None and waited > self._side_work_threshold():
            after = self.Event(enable_timing=True)
            after.record()
            after.synchronize()
            ms = begin.elapsed_time(after)
            full = True
        return set_index, seed, out, ms, full, launch_s

    def _side_work_threshold(self):
        return max(3 * self.idle_sync_s, self.idle_sync_s + 10e-6)

    def warm_up(self, seconds, min_calls):
        """Untimed calls: module load, autotuning and allocator growth stay out of the numbers,
        and the GPU leaves its idle clocks; on CUDA also calibrates an idle synchronize()."""
        if not self.cuda:
            seconds = min(seconds, 0.05)  # no clocks to ramp up; caches and the allocator only
        start = self.perf()
        waits = self.idle_waits
        n = 0
        while n < min_calls or self.perf() - start < seconds:
            self._one()
            if self.cuda:
                t0 = self.perf()
                self.synchronize()
                waits.append(self.perf() - t0)
            n += 1
            if n >= min_calls and self.perf() - start > 10 * max(seconds, 0.5):
                break
        if self.cuda and len(waits) >= 3:  # the median of every warm-up call so far
            self.idle_sync_s = sorted(waits)[len(waits) // 2]
        self.warmup_calls += n
        return n

    def block(self, calls, sample_p=0.0, keep=None):
        """`calls` timed calls. `keep(call_index, set_index, seed, outputs)` is called for the
        calls drawn into the sample (probability sample_p each, drawn after the call)."""
        times, full_calls = [], 0
        self.launch_s = []
        for _ in range(calls):
            index = self.calls
            set_index, seed, out, ms, full, launch_s = self._one()
            times.append(ms)
            if launch_s is not None:
                self.launch_s.append(launch_s)
            full_calls += full
            if keep is not None and sample_p > 0:
                draw = int.from_bytes(self.urandom(4), "little") / 2**32
                if draw < sample_p:
                    keep(index, set_index, seed, out)
                    # Keeping (a copy, a file) disturbs caches and clocks: one untimed call
                    # before the next timed one, so the sampled calls' neighbours pay nothing.
                    del out
                    self._one()
                    self.warmup_calls += 1
                    continue
            del out
        return times, full_calls

    @property
    def method(self):
        if not self.cuda:
            return "host perf_counter around the call"
        if self.hold is not None:
            start = (f"made while every multiprocessor was held for {HOLD_US:.0f} us after the L2 "
                     f"flush, so the host's launch time is not counted up to {HOLD_US:.0f} us")
        else:
            start = f"made after the L2 flush alone (no device hold: {self.hold_note})"
        return ("cuda events on the calling stream around the call, " + start + " (device-wide "
                "synchronise checked after each call; calls with work left on other streams "
                "timed to the end of that synchronise)")
