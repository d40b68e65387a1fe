#!/usr/bin/env python3
"""Does where a call's buffers lie change how long its kernel takes?

Self-vs-self relu_4m (one ~13 us kernel, 16 MiB in, 16 MiB out) reads 0.986x-1.006x on an H100
from one fresh machine to the next (issue 41): the kernel's own duration differs by up to 1.4 %
between the referee's process and the candidate's, while the same process, timing both over the
same buffers, reads 1.000x. bench/sample_probe.py ruled out the candidate's kept samples. This
probe times relu(x) into y (torch.clamp(x, min=0, out=y)) in one process with kernelpro's Timer (CUPTI busy time, L2 flushed,
gated) where only x's and y's places change, conditions interleaved round by round:

  in-K     x in the K-th of 8 buffers allocated apart, y fixed
  out-K    y in the K-th of 8 buffers allocated apart, x fixed
  in+OFF   x a view at byte offset OFF into a 2 MiB-aligned block, y fixed
  out+OFF  y likewise

each with the timer's L2 flush as it is (zeroing twice the L2: the cache is left full of dirty
lines the call's misses must write back) and as a read (`/read`: the same bytes summed, the cache
left clean). Per condition: the median busy time; per group: the spread (slowest over fastest). A
spread over 1 % among the `in-K`/`out-K` rows says placement in physical memory matters (then both
sides must be timed over many places, or the flush made placement-blind); among `+OFF` rows,
alignment does. Writes JSON; asserts nothing.

    bench/placement_probe.py [--json-out F] [--exp 22] [--rounds 10] [--calls 20] [--device cuda]
"""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

OFFSETS = (0, 512, 4096, 65536, 1 << 20)
APART = 8


def conditions(torch, n, device):
    """{name: (x, y)} over one fixed pair and the places above."""
    def alone():
        return torch.empty(n, device=device)

    def aligned_views():
        # One block with room for every offset; its start rounded up to 2 MiB.
        block = torch.empty(n + (4 << 20) // 4, device=device)
        skip = (-block.data_ptr()) % (2 << 20) // 4
        return [block[skip + off // 4: skip + off // 4 + n] for off in OFFSETS], block

    x0, y0 = alone(), alone()
    xs, ys = [alone() for _ in range(APART)], [alone() for _ in range(APART)]
    xv, keep_x = aligned_views()
    yv, keep_y = aligned_views()
    out = {}
    for k in range(APART):
        out[f"in-{k}"] = (xs[k], y0)
        out[f"out-{k}"] = (x0, ys[k])
    for off, x, y in zip(OFFSETS, xv, yv):
        out[f"in+{off}"] = (x, y0)
        out[f"out+{off}"] = (x0, y)
    return out, (keep_x, keep_y)


class ReadFlush:
    """The timer's flush (`flush.zero_()`) as a read of the same bytes: L2 left holding clean
    lines."""

    def __init__(self, torch, buffer):
        self.words = buffer.view(torch.int32)

    def zero_(self):
        self.words.sum()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json-out")
    ap.add_argument("--exp", type=int, default=22)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--device", default="cuda", help="cpu: a smoke test of the probe itself")
    args = ap.parse_args()
    import torch

    from kernelpro_worker.timing import Timer

    class Relu(torch.nn.Module):
        def forward(self, x, y):  # relu into a given place: one kernel, as torch.relu
            return torch.clamp(x, min=0.0, out=y)

    n = 1 << args.exp
    base = [torch.randn(n, device=args.device), torch.zeros(n, device=args.device)]
    where, _blocks = conditions(torch, n, args.device)
    places, timers = {}, {}
    for flush in ("zero", "read"):
        for name, (x, y) in where.items():
            t = Timer(torch, args.device, Relu(), [base])
            t.buffers = [[x, y]]  # the condition's places; refilled before every call as always
            if flush == "read" and t.flush is not None:
                t.flush = ReadFlush(torch, t.flush)
            name = name if flush == "zero" else name + "/read"
            t.warm_up(0.05, 3)
            places[name], timers[name] = (x, y), t
    busy = {name: [] for name in places}
    names = list(places)
    for r in range(args.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            block = timers[name].block(args.calls)
            busy[name] += block.get("busy_ms") or block["times_ms"]
    rows = {name: statistics.median(v) * 1e3 for name, v in busy.items()}
    groups = {}
    for name, us in rows.items():
        kind, _, flush = name.partition("/")
        group = (kind.split("-")[0] if "-" in kind else kind.split("+")[0] + "+off") + (
            "/" + flush if flush else "")
        groups.setdefault(group, []).append(us)
    print(f"{'condition':<12} {'busy us':>9}")
    for name, us in rows.items():
        print(f"{name:<12} {us:>9.3f}")
    print()
    for group, values in groups.items():
        print(f"{group:<12} spread {max(values) / min(values):.4f} "
              f"({min(values):.3f} .. {max(values):.3f} us)")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"busy_us": rows, "groups": {g: [min(v), max(v)] for g, v in
                                                   groups.items()}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
