#!/usr/bin/env python3
"""Writes energy.jsonl: the replay cassette of a short `optimize --energy aware` run on swish in
which the energy term chooses between two children of the same speed.

    python3 problems/swish/energy/make_demo.py      (from anywhere; rewrites energy.jsonl)

    kernelpro optimize --problem problems/swish/problem.py --energy aware \\
        --llm replay:problems/swish/energy/energy.jsonl --llm-replay-mode sequential \\
        --iterations 2 --candidates 2

Iteration 1 asks for two candidates and gets the matched-speed pair: cuda_swish_ieee.py and
cuda_swish_fast.py, same bytes, same speed within noise, different instruction counts. With
`--energy aware` the reward adds ε·ln(energy_reduction), so the child with the lower energy proxy
ranks higher, and iteration 2 expands it. Iteration 2 gets the project's cuda_swish.py. The
model's words are written by the kernelpro project; the builds, timings, profiles and the proxy
are real.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SWISH = os.path.dirname(HERE)
MODEL = "kernelpro-demo (hand-written)"
RECORDED_AT = "2026-12-02T00:00:00.000Z"


def recording(user, schema, structured, system, input_tokens, output_tokens):
    return {
        "fingerprint": "hand-written: replay with replay_mode = sequential",
        "model": MODEL, "provider": "kernelpro-demo", "recorded_at": RECORDED_AT,
        "request": {"max_tokens": 16384, "messages": [{"role": "user", "text": "(abbreviated) " + user}],
                    "response_schema": {"name": schema, "schema": {"type": "object"}}, "stop": [],
                    "system": "(abbreviated) " + system, "tools": []},
        "response": {"attempts": 1, "input_tokens": input_tokens, "latency_ms": 0, "model": MODEL,
                     "output_tokens": output_tokens, "provider_stop_reason": "end_turn",
                     "stop_reason": "end", "structured": structured, "text": "", "tool_calls": []},
    }


def read(path):
    with open(path) as f:
        return f.read()


def analysis(summary):
    return {"bottleneck": "memory", "severity": "low", "summary": summary,
            "recommendations": [{"priority": 1, "action": "Keep the float4 traffic; spend fewer "
                                 "instructions per element.", "rationale": "The kernel is at HBM "
                                 "bandwidth: only the arithmetic's energy is left to save."}]}


def main():
    ieee, fast = read(os.path.join(HERE, "cuda_swish_ieee.py")), read(os.path.join(HERE, "cuda_swish_fast.py"))
    base = read(os.path.join(SWISH, "candidates", "cuda_swish.py"))
    lines = [
        recording("Initial: write two candidates for swish.", "candidates",
                  {"candidates": [
                      {"strategy": "float4 fused pass with an accurate expf and an IEEE division",
                       "code": ieee},
                      {"strategy": "the same float4 pass with __expf and __fdividef", "code": fast}]},
                  "You are the programmer agent.", 4000, 3000),
        recording("Analyse this profile.", "profile_analysis",
                  analysis("At HBM bandwidth; the accurate expf and division cost instructions."),
                  "You are the profiling agent.", 2200, 300),
        recording("Analyse this profile.", "profile_analysis",
                  analysis("At HBM bandwidth with few instructions per element."),
                  "You are the profiling agent.", 2200, 300),
        recording("Iteration 1: what should later iterations know?", "search_memory_notes",
                  {"search_findings": [], "errors_and_corrections": [],
                   "successful_patterns": ["Both float4 passes reach HBM bandwidth."],
                   "key_files": [], "learnings": ["At equal speed, fewer instructions per element "
                                                  "cost less energy."]},
                  "You keep the notes of the run.", 1500, 150),
        recording("Optimize: improve the selected kernel.", "candidates",
                  {"candidates": [{"strategy": "the fast-intrinsic pass with an exact division "
                                   "kept for accuracy", "code": base}]},
                  "You are the programmer agent.", 5000, 2500),
        recording("Analyse this profile.", "profile_analysis",
                  analysis("At HBM bandwidth."), "You are the profiling agent.", 2200, 300),
        recording("Iteration 2: what should later iterations know?", "search_memory_notes",
                  {"search_findings": [], "errors_and_corrections": [], "successful_patterns": [],
                   "key_files": [], "learnings": []},
                  "You keep the notes of the run.", 1500, 150),
    ]
    with open(os.path.join(HERE, "energy.jsonl"), "w") as out:
        for line in lines:
            out.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
