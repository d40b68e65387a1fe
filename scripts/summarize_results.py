#!/usr/bin/env python3
"""Prints a table of `kernelpro eval --json` lines (as written by scripts/gpu_verify)."""

import json
import os
import sys


def main(path):
    if not os.path.exists(path):
        return  # phases that evaluate nothing (binary, profile, analyze, advise) write no results
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print(f"{'label':<32} {'candidate':<28} {'status':<14} {'ref ms':>9} {'cand ms':>9} {'speedup':>8}  interval / message")
    for r in rows:
        cand = os.path.basename(r.get("candidate") or "-")
        if "error" in r and r.get("status") is None:
            print(f"{r['label']:<32} {cand:<28} {'problem error':<14} {'':>9} {'':>9} {'':>8}  {r['error'][:90]}")
            continue
        if r.get("speedup") is not None:
            lo, hi = r["speedup_interval"]
            tail = f"[{lo:.3f}, {hi:.3f}]"
            print(f"{r['label']:<32} {cand:<28} {r['status']:<14} {r['reference_ms']:>9.4f} "
                  f"{r['candidate_ms']:>9.4f} {r['speedup']:>7.3f}x  {tail}")
        else:
            msg = (r.get("message") or "").splitlines()
            print(f"{r['label']:<32} {cand:<28} {r['status']:<14} {'':>9} {'':>9} {'':>8}  {(msg[0] if msg else '')[:90]}")


if __name__ == "__main__":
    main(sys.argv[1])
