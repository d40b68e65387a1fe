#!/usr/bin/env python3
"""NVML's energy counter moves in steps; how much that matters to a window of energy per call.

    python3 bench/nvml_tick_probe.py [--windows 8] [--window-s 2] [--warmup-cap-s 10]

On a GPU: first how often the counter moves (the gaps between changes while a kernel runs), then
the same two arms (eager swish, x * sigmoid(x), and torch's fused silu on the swish problem's
input) measured by the energy step twice, with windows read at arbitrary instants (how the step
read them until 2026-12-02) and with windows on the counter's steps (kernelpro_worker/energy.py
now). Prints each window's power and energy per call, and each arm's spread (max/min of its
windows' power). Changes nothing on the GPU: clocks as found.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

from kernelpro_worker import energy  # noqa: E402


def arbitrary_window(nvml, arm, seconds, sync, clock):
    """The window as the step read it before: at a synchronize, wherever the counter stood."""
    sync()
    e0, t0 = nvml.energy_mj(), clock()
    calls = 0
    while True:
        arm.call()
        calls += 1
        if clock() - t0 >= seconds:
            break
    sync()
    e1, t1 = nvml.energy_mj(), clock()
    return {"raw_mj": e1 - e0, "seconds": t1 - t0, "calls": calls}


def counter_steps(nvml, call, seconds=2.0):
    gaps, last_e, last_t = [], nvml.energy_mj(), time.monotonic()
    end = last_t + seconds
    while time.monotonic() < end:
        call()
        e = nvml.energy_mj()
        if e != last_e:
            t = time.monotonic()
            gaps.append(t - last_t)
            last_e, last_t = e, t
    return gaps[1:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--windows", type=int, default=8)
    ap.add_argument("--window-s", type=float, default=2.0)
    ap.add_argument("--warmup-cap-s", type=float, default=10.0)
    args = ap.parse_args()
    x = torch.randn(64 * 1024 * 1024, device="cuda")
    arms = [energy.Arm("reference", "x * sigmoid(x)", lambda: x * torch.sigmoid(x)),
            energy.Arm("candidate1", "silu", lambda: torch.nn.functional.silu(x))]
    nvml = energy.Nvml(None, energy.device_index())
    try:
        print(f"device: {nvml.name()}")
        gaps = counter_steps(nvml, arms[0].call)
        print(f"counter steps while a kernel runs: {len(gaps)} in 2 s, median gap "
              f"{1000 * statistics.median(gaps):.1f} ms, min {1000 * min(gaps):.1f}, "
              f"max {1000 * max(gaps):.1f}")
        aligned = energy._window
        for name, window in (("arbitrary instants", arbitrary_window), ("on counter steps", aligned)):
            energy._window = window
            result = energy.measure(nvml, arms, window_s=args.window_s, windows=args.windows,
                                    idle_windows=3, warmup_cap_s=args.warmup_cap_s,
                                    sync=torch.cuda.synchronize)
            print(f"\n== windows read at {name}: idle {result['idle']['watts']:.1f} W "
                  f"(windows {[round(w['watts'], 1) for w in result['idle']['windows']]})")
            print("| arm | warm-up | window W | mJ per call | W max/min |")
            print("|---|---|---|---|---|")
            for arm in result["arms"]:
                watts = [w["watts"] for w in arm["windows"]]
                mj = [w["mj_per_call"] for w in arm["windows"]]
                warm = arm["warmup"]
                print(f"| {arm['label']} | {'settled' if warm['settled'] else 'cap'} "
                      f"{warm['seconds']:.1f} s | {' '.join(f'{v:.1f}' for v in watts)} | "
                      f"{' '.join(f'{v:.3f}' for v in mj)} | {max(watts) / min(watts):.4f} |")
        energy._window = aligned
    finally:
        nvml.close()


if __name__ == "__main__":
    main()
