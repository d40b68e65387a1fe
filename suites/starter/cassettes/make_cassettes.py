#!/usr/bin/env python3
"""Writes the starter suite's replay cassettes: cuda/<problem file stem>.jsonl and cpu/<...>.jsonl,
one per problem and device, for `kernelpro optimize` (or `kernelpro suite optimize`) with
`--iterations 2 --candidates 2` and sequential replay.

    python3 suites/starter/cassettes/make_cassettes.py      (from anywhere; rewrites cuda/, cpu/)

Everything is derived from the suite's candidate files (candidates/<device>/<stem>.py), so no
kernel is written twice. The programmer's two replies, the same story for every problem:

  1 initial   the candidate file as it is (correct), and the same file with forward() handing the
              kernel its first input in reverse row order, x.flip(0) (incorrect on purpose)
  2 next      a correct variant of the candidate (its own extension name; CPU: built with
              -march=native as well; CUDA: with -lineinfo, so profiles can name source lines),
              and the candidate with a misspelt input check, TORCH_CHECK_ARGS (does not compile)

So a two-iteration search shows the three outcomes (correct, incorrect, compile error) on every
problem, whichever node MCTS expands in iteration 2 (sequential replay serves the programmer's
replies in file order, whatever the prompt says). The profiling agent's analyses (CUDA only: on
the CPU nothing is profiled) and the memory extractor's notes are written generically, a few
more than a two-iteration run asks for; unused recordings are never served and do no harm.
Hand-written by the kernelpro project, not captured from a model; what a run measures (builds,
checks, timings, profiles) is real.
"""
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.dirname(HERE)
MODEL = "kernelpro-starter (hand-written)"
RECORDED_AT = "2026-12-02T00:00:00.000Z"
DEVICES = ("cuda", "cpu")


def replace_once(text, old, new, what):
    if text.count(old) < 1:
        raise SystemExit(f"make_cassettes: {what}: '{old}' not found")
    return text.replace(old, new, 1)


def renamed(text, suffix):
    """The same candidate under another extension name, so its build never collides."""
    out, n = re.subn(r'load_inline\(name="([^"]+)"', lambda m: f'load_inline(name="{m.group(1)}_{suffix}"',
                     text, count=1)
    if n != 1:
        raise SystemExit("make_cassettes: no load_inline(name=...) in a candidate")
    return out


def reversed_rows(text, what):
    """forward() passes its first input to the kernel flipped along dim 0: wrong results."""
    head, sep, tail = text.partition("def forward")
    if not sep:
        raise SystemExit(f"make_cassettes: {what}: no forward()")
    tail = replace_once(tail, ".contiguous()", ".flip(0).contiguous()", what)
    return renamed(head + sep + tail, "reversed")


def variant(text, device, what):
    if device == "cpu":
        text = replace_once(text, 'extra_cflags=["-O3"]', 'extra_cflags=["-O3", "-march=native"]', what)
    else:
        text = replace_once(text, 'extra_cuda_cflags=["-O3"]', 'extra_cuda_cflags=["-O3", "-lineinfo"]',
                            what)
    return renamed(text, "v2")


def misspelt_check(text, what):
    return renamed(replace_once(text, "TORCH_CHECK(", "TORCH_CHECK_ARGS(", what), "typo")


def recording(user, schema, structured, system, input_tokens, output_tokens):
    return {
        "fingerprint": "hand-written: replay with replay_mode = sequential",
        "model": MODEL,
        "provider": "kernelpro-starter",
        "recorded_at": RECORDED_AT,
        "request": {
            "max_tokens": 16384,
            "messages": [{"role": "user", "text": "(abbreviated) " + user}],
            "response_schema": {"name": schema, "schema": {"type": "object"}},
            "stop": [],
            "system": "(abbreviated) " + system,
            "tools": [],
        },
        "response": {
            "attempts": 1,
            "input_tokens": input_tokens,
            "latency_ms": 0,
            "model": MODEL,
            "output_tokens": output_tokens,
            "provider_stop_reason": "end_turn",
            "stop_reason": "end",
            "structured": structured,
            "text": "",
            "tool_calls": [],
        },
    }


def first_doc_line(text):
    m = re.match(r'\s*"""(.*?)(\n|""")', text)
    return m.group(1).strip().rstrip(".") if m else "the suite's candidate"


def programmer_replies(stem, device, code):
    what = f"candidates/{device}/{stem}.py"
    summary = first_doc_line(code)
    flag = "-march=native" if device == "cpu" else "-lineinfo"
    return [
        recording(f"Initial: write two candidates for {stem}.", "candidates", {"candidates": [
            {"strategy": summary, "code": code},
            {"strategy": "the same kernel, rows handed over in reverse order", "code": reversed_rows(code, what)},
        ]}, "You are the programmer agent.", 3000, 2500),
        recording(f"Improve or repair a candidate for {stem}.", "candidates", {"candidates": [
            {"strategy": f"the working kernel built with {flag}", "code": variant(code, device, what)},
            {"strategy": "the working kernel with stricter input checks", "code": misspelt_check(code, what)},
        ]}, "You are the programmer agent.", 3400, 2600),
    ]


ANALYSES = [
    ("memory: global loads and stores dominate the time", "medium",
     "The kernel's warps mostly wait on global memory (long scoreboard); arithmetic is not the limit.",
     [(1, "Keep 16-byte accesses and more bytes in flight per thread",
       "wider, independent loads hide DRAM latency when occupancy cannot grow"),
      (2, "Write each output once, from registers", "a second pass over the output doubles its traffic")]),
    ("latency: too few warps to hide memory latency", "medium",
     "Occupancy is limited by registers per thread; the grid covers the SMs only once.",
     [(1, "Trade some per-thread work for more resident warps",
       "more warps per SM give the scheduler something to issue while loads are outstanding")]),
    ("memory: near the bandwidth the access pattern allows", "low",
     "Little is left at this level; the remaining gap is launch overhead and the tail wave.",
     [(1, "Stop tuning this kernel", "the measured interval overlaps the best candidate's")]),
    ("compute: FMA pipe busy", "low",
     "The inner loop issues FMAs back to back from registers; shared-memory reads are vectorised.",
     [(1, "Keep the register tile", "it is what feeds the FMA pipe")]),
]


def analyses():
    return [recording("Analyse this profile.", "profile_analysis",
                      {"bottleneck": b, "severity": s, "summary": summ,
                       "recommendations": [{"priority": p, "action": a, "rationale": r} for p, a, r in recs]},
                      "You are the profiling agent.", 2200, 300)
            for b, s, summ, recs in ANALYSES]


def notes(stem):
    empty = {"errors_and_corrections": [], "search_findings": [], "successful_patterns": [],
             "key_files": [], "learnings": []}
    first = dict(empty, errors_and_corrections=[
        f"{stem}: the kernel must see the inputs in their own order; flipping rows gives wrong results."],
        successful_patterns=["One fused kernel with the input checks of the candidate file."])
    second = dict(empty, errors_and_corrections=[
        "TORCH_CHECK_ARGS does not exist: input checks are written with TORCH_CHECK."],
        learnings=["Build flags alone change the time little: compare intervals, not estimates."])
    third = dict(empty, learnings=["Nothing new this iteration."])
    return [recording(f"Iteration {i + 1}: what should later iterations know?", "search_memory_notes", n,
                      "You keep the notes of the run.", 1500, 150)
            for i, n in enumerate([first, second, third])]


def main():
    problems = sorted(glob.glob(os.path.join(SUITE, "problems", "level*", "*.py")))
    for device in DEVICES:
        os.makedirs(os.path.join(HERE, device), exist_ok=True)
        for problem in problems:
            stem = os.path.splitext(os.path.basename(problem))[0]
            with open(os.path.join(SUITE, "candidates", device, stem + ".py")) as f:
                code = f.read()
            lines = programmer_replies(stem, device, code)
            if device == "cuda":
                lines += analyses()
            lines += notes(stem)
            with open(os.path.join(HERE, device, stem + ".jsonl"), "w") as out:
                for line in lines:
                    out.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"make_cassettes: {len(problems)} problems x {len(DEVICES)} devices written under {HERE}")


if __name__ == "__main__":
    main()
