#!/usr/bin/env python3
"""Writes the replay cassette of an optimize run from a Triton program: problems/triton/layer_norm.

    python3 problems/triton/layer_norm/demo/make_demo.py     (from anywhere; rewrites triton.jsonl)

    kernelpro optimize --problem problems/triton/layer_norm/problem.py \\
        --llm replay:problems/triton/layer_norm/demo/triton.jsonl --llm-replay-mode sequential \\
        --iterations 1 --candidates 2

The program (two Triton kernels, docs/programs.md) is the baseline to beat and reference.py the
outputs to match. The scripted programmer answers with two CUDA candidates:
  - the project's one-pass layer norm (candidates/cuda_layer_norm.py);
  - the same kernel that forgets to add the bias: incorrect, and the run says so.
Then come a profiling analysis and the memory notes. Everything the run measures is real: the
builds, the checks against the PyTorch reference, the timing against the Triton program, and
the profiles. Only the model's words are scripted (written by the kernelpro project).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEM = os.path.dirname(HERE)
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


def main():
    with open(os.path.join(PROBLEM, "candidates", "cuda_layer_norm.py")) as f:
        good = f.read()
    # The second candidate forgets the bias in its vectorised epilogue: one line changes.
    load_bias = "const float4 h = __ldg(b4 + c);"
    assert load_bias in good and 'name="kp_tlayer_norm_cuda"' in good, \
        "candidates/cuda_layer_norm.py changed: update make_demo.py"
    bad = good.replace(load_bias, "const float4 h = make_float4(0.f, 0.f, 0.f, 0.f);").replace(
        'name="kp_tlayer_norm_cuda"', 'name="kp_tlayer_norm_nobias"')
    candidates = [
        {"strategy": "one 256-thread block per row: the row stays in registers (float4 loads), "
                     "warp-shuffle mean and variance, one read of x and one write of y instead of "
                     "the Triton program's two passes", "code": good},
        {"strategy": "the same one-pass kernel with a leaner epilogue", "code": bad},
    ]
    lines = [
        recording("Initial: beat the Triton layer norm program.", "candidates",
                  {"candidates": candidates}, "You are the programmer agent.", 7000, 5000),
        recording("Analyse this profile.", "profile_analysis",
                  {"bottleneck": "memory", "severity": "low",
                   "summary": "One pass over x and y near HBM bandwidth: what is left is the tail "
                              "of the grid and the reductions' latency.",
                   "recommendations": [{"priority": 1, "action": "Process two rows per block to "
                                        "hide the reductions' latency behind the next row's loads.",
                                        "rationale": "The loads of a row wait on the previous "
                                        "row's reduction."}]},
                  "You are the profiling agent.", 2200, 300),
        recording("Iteration 1: what should later iterations know?", "search_memory_notes",
                  {"search_findings": [], "errors_and_corrections":
                   ["Dropping the bias term makes the layer norm incorrect against the reference."],
                   "successful_patterns": ["One block per row with the row in registers reads x once."],
                   "key_files": [], "learnings": []},
                  "You keep the notes of the run.", 1500, 150),
    ]
    with open(os.path.join(HERE, "triton.jsonl"), "w") as out:
        for line in lines:
            out.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
