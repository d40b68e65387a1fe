"""The gate: a timed call's launches all enqueued before its first kernel runs.

Before a timed call the timer launches a spin kernel (torch.cuda._sleep, ATen's `spin_kernel`) on
the stream the call launches on, records an event behind it, and only then calls forward. While the
spin runs, forward's launches queue up behind it; when it ends, the call's kernels run back to back,
so the span of the call's device work (first start to last end, every stream) holds the device's
own time between kernels (about 1 us each on Hopper) and none of the host's time to launch them.
NVIDIA's NVBench holds its stream the same way (a blocking kernel), and so does no timer that reads
events around a call: those count the launches.

The gate has a length, not a host flag to wait on, so it can never deadlock: a forward that waits
on the device inside (a synchronize, an .item()) just waits for the gate to end. Whether it held is
checked for every timed call, both ways:

  host    the gate's event was still pending when forward returned (`Event.query()` right after
          forward): every launch of the call had been enqueued before the gate released (the
          same fact is read from the profiler's runtime-API records where it keeps them, and
          reported beside, `gate_runtime_late`: calls whose last launch returned after their
          gate's record ended; the event decides);
  device  no record of the call started before the gate's own record ended (work on a stream the
          gate does not hold, such as a candidate's private non-blocking stream, runs at once).

A block with a call the gate did not hold is timed again with a gate four times as long, up to
twice; if it still does not hold, the timer turns the gate off for good and times calls ungated,
saying why (`gate_held: false`, `gate_note`). Ungated, a call's span only grows by the host's
gaps, so defeating the gate never makes a call look faster.

Warm-up calls are never gated (as NVBench's); their host-inclusive times (forward called to the
device idle, the way KernelBench's events count a call) are reported beside the gated spans, and
their launch times size the gate: four times the 90th percentile of the recent launches plus
50 us, at least 100 us, at most 50 ms. The spin is given in SM cycles; cycles per microsecond
start from the SM clock (NVML) and follow the gate records' measured lengths.
"""

KERNEL = "spin_kernel"  # torch.cuda._sleep's kernel, as CUPTI names it
MIN_US = 100.0
MAX_US = 50_000.0
RETRY_FACTOR = 4.0
RETRIES = 2
LAUNCH_FACTOR = 4.0
LAUNCH_MARGIN_US = 50.0
DEFAULT_MHZ = 1980.0  # Hopper's boost clock, until the clock or a gate record says otherwise
RECENT = 32           # launch times kept for sizing


def is_gate(record):
    return KERNEL in record.get("name", "")


def _gate_and_work(records, gated):
    """(the call's gate record or None, its other records in launch order): the gate is the first
    spin kernel of a gated call in launch order; in an ungated call a spin is work."""
    ordered = sorted(records, key=lambda e: e["correlation"])
    if gated:
        for i, e in enumerate(ordered):
            if is_gate(e):
                return e, ordered[:i] + ordered[i + 1:]
    return None, ordered


def read_call(records, gated):
    """One call's device records (the harness's stream left out), read under the gate.

    Returns {"span_ns": (start, end) or None, "busy_ns": union of the work's intervals,
    "records": how many, "gate_ns": (start, end) or None, "early": records that started before
    the gate ended}. The gate (`_gate_and_work`) is neither in the span nor in the busy time. A
    gated call whose gate record is missing counts as early."""
    gate, work = _gate_and_work(records, gated)
    out = {"span_ns": None, "busy_ns": 0, "records": len(work),
           "gate_ns": (gate["start_ns"], gate["end_ns"]) if gate else None, "early": 0}
    if not work:
        return out
    out["span_ns"] = (min(e["start_ns"] for e in work), max(e["end_ns"] for e in work))
    out["busy_ns"] = busy_ns(work)
    if gated:
        out["early"] = (len(work) if gate is None
                        else sum(e["start_ns"] < gate["end_ns"] for e in work))
    return out


def launched_after_release(calls, launch_ends):
    """The runtime-API cross-check of the gate: of the gated calls' records (each call's list, its
    gate record in it), how many calls had a launch that returned (`launch_ends`: correlation ->
    the runtime call's end, host time on the profiler's clock) after their gate's record ended.
    None when the profiler kept no runtime-API record of any of them (nothing to check with)."""
    late = checked = 0
    for records in calls:
        gate, work = _gate_and_work(records, gated=True)
        ends = [launch_ends[e["correlation"]] for e in work if e["correlation"] in launch_ends]
        if gate is None or not ends:
            continue
        checked += 1
        late += max(ends) > gate["end_ns"]
    return late if checked else None


def busy_ns(records):
    """The length of the union of the records' [start, end) intervals."""
    total, end = 0, None
    for s, e in sorted((r["start_ns"], r["end_ns"]) for r in records):
        if end is None or s >= end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


class Gate:
    """Launches the gate and keeps its length. `note` says why it is off ("" while on)."""

    def __init__(self, torch, mhz=None):
        self.sleep = torch.cuda._sleep
        self.Event = torch.cuda.Event
        self.cycles_per_us = float(mhz or DEFAULT_MHZ)
        self.floor_us = MIN_US   # raised by a retry, never lowered
        self.length_us = MIN_US
        self.launches = []       # recent ungated launch times, us
        self.note = ""

    @property
    def on(self):
        return not self.note

    def saw_launch(self, launch_us):
        self.launches.append(launch_us)
        del self.launches[:-RECENT]

    def size(self):
        """The length for the next block, from the recent launches: their 90th percentile, so one
        host hiccup (a garbage collection) does not make every later call wait long."""
        ordered = sorted(self.launches)
        slow = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] if ordered else 0.0
        wanted = LAUNCH_FACTOR * slow + LAUNCH_MARGIN_US
        self.length_us = min(MAX_US, max(self.floor_us, wanted))
        return self.length_us

    def lengthen(self):
        """After a block the gate did not hold: four times as long; False when at the cap."""
        if self.length_us >= MAX_US:
            return False
        self.floor_us = min(MAX_US, self.length_us * RETRY_FACTOR)
        self.length_us = self.floor_us
        return True

    def turn_off(self, why):
        self.note = why

    def close(self):
        """Launches the spin on the current stream and returns the event recorded behind it."""
        self.sleep(self.cycles())
        released = self.Event()
        released.record()
        return released

    def cycles(self):
        return max(1, int(self.length_us * self.cycles_per_us))

    def calibrate(self, gate_lengths_ns, asked_cycles):
        """The gate records' measured lengths (ns) of spins of `asked_cycles`: cycles per
        microsecond follow the SM clock the spins ran at."""
        lengths = sorted(n for n in gate_lengths_ns if n > 0)
        if lengths:
            measured_us = lengths[len(lengths) // 2] / 1e3
            self.cycles_per_us = min(4000.0, max(200.0, asked_cycles / measured_us))
