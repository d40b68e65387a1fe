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
"""

import os
import time

SCALE_LOW = 0.5  # factors are drawn from [SCALE_LOW, 1)


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

    def __init__(self, torch, device, model, base_sets, flush_bytes=-1, perturb=True):
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
        if self.cuda:
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
        """One call on fresh inputs: (set, seed, outputs, ms, full)."""
        set_index = self.calls % len(self.base_sets)
        seed = self._seed()
        args = self._refill(set_index, seed)
        self.calls += 1
        if not self.cuda:
            t0 = self.perf()
            out = self.forward(args)
            return set_index, seed, out, (self.perf() - t0) * 1e3, False
        if self.flush is not None:
            self.flush.zero_()
        begin, end = self.Event(enable_timing=True), self.Event(enable_timing=True)
        begin.record()
        out = self.forward(args)
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
        return set_index, seed, out, ms, full

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
        for _ in range(calls):
            index = self.calls
            set_index, seed, out, ms, full = self._one()
            times.append(ms)
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
        return ("cuda events on the calling stream around the call (device-wide synchronise "
                "checked after each call; calls with work left on other streams timed to the end "
                "of that synchronise)")
