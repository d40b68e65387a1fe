"""Device memory of a worker's steps: what each request held on the GPU at its peak, and an
out-of-memory failure said in one line.

Every reply of a worker whose process has started CUDA carries `device_memory`: the peak bytes
torch's allocator reserved from the device during the request (`peak_reserved_bytes`: what this
process kept from every other process on the card), the peak it handed out to tensors
(`peak_allocated_bytes`), and the device's free and total bytes when the request ended. The peaks
are reset before each request, so a reply's peak is that request's, held memory of earlier ones
included. Memory a candidate allocates outside torch's allocator (cudaMalloc in its own code) and
the CUDA context itself are not in the peaks; the free bytes see them.

An out-of-memory failure's message (torch's "CUDA out of memory. Tried to allocate 4.00 GiB. GPU
0 has a total capacity of 79.18 GiB of which 1.37 GiB is free. ...", several lines) becomes one
line naming the process and the step: "out of memory in the candidate's check step: it asked for
4.00 GiB with 1.37 GiB free of 79.18 GiB; this process held 4.50 GiB at its peak".
"""

import re

GIB = float(1 << 30)
_ASKED = re.compile(r"[Tt]ried to allocate ([0-9.]+ [KMGT]i?B)")
_FREE = re.compile(r"total capacity of ([0-9.]+ [KMGT]i?B) of which ([0-9.]+ [KMGT]i?B) is free")


class StepMemory:
    """Brackets one request: `begin()` before it, `end()` after it (None while CUDA has not
    started in this process, or on the CPU)."""

    def __init__(self, torch):
        self.cuda = getattr(torch, "cuda", None)

    def _started(self):
        try:
            return self.cuda is not None and self.cuda.is_initialized()
        except Exception:  # noqa: BLE001 - a broken CUDA: nothing to say
            return False

    def begin(self):
        if self._started():
            try:
                self.cuda.reset_peak_memory_stats()
            except Exception:  # noqa: BLE001
                pass

    def release(self):
        """Hands the memory torch's allocator holds but no tensor uses back to the device."""
        if self._started():
            try:
                self.cuda.empty_cache()
            except Exception:  # noqa: BLE001 - a device in a failed state: nothing to hand back
                pass

    def end(self):
        if not self._started():
            return None
        try:
            free, total = self.cuda.mem_get_info()
            return {"peak_reserved_bytes": int(self.cuda.max_memory_reserved()),
                    "peak_allocated_bytes": int(self.cuda.max_memory_allocated()),
                    "free_bytes": int(free), "total_bytes": int(total)}
        except Exception:  # noqa: BLE001 - a device in a failed state: no figures
            return None


def _gib(n):
    return f"{n / GIB:.2f} GiB"


def oom_line(message, role, step, memory):
    """One line for an out-of-memory failure of `role`'s `step` ("" when `message` is not one):
    what was asked for and what was free (from torch's message, else the device's free bytes),
    and what this process held at its peak."""
    if "out of memory" not in message.lower():
        return ""
    asked, free = _ASKED.search(message), _FREE.search(message)
    who = "the referee's" if role == "referee" else "the candidate's"
    line = f"out of memory in {who} {step} step"
    if asked:
        line += f": it asked for {asked.group(1)}"
    if free:
        line += f"{' with' if asked else ':'} {free.group(2)} free of {free.group(1)}"
    elif memory:
        line += (f"{' with' if asked else ':'} {_gib(memory['free_bytes'])} free of "
                 f"{_gib(memory['total_bytes'])}")
    if memory:
        line += f"; this process held {_gib(memory['peak_reserved_bytes'])} at its peak"
    return line
