#!/usr/bin/env python3
"""Writes the CUTLASS demo for problems/gemm_bf16: a replay cassette in which the programmer
looks things up in the CUTLASS headers with its tools before it writes two CUTLASS candidates.

    python3 problems/gemm_bf16/demo/make_demo.py      (from anywhere; rewrites cuda/ and cutlass.jsonl)

    kernelpro optimize problems/gemm_bf16/problem.py --cutlass-dir DIR \\
        --llm replay:problems/gemm_bf16/demo/cutlass.jsonl --llm-replay-mode sequential \\
        --iterations 1 --candidates 2

Everything here is written by the kernelpro project, not captured from a model. The cassette is
replayed in sequential order per stream (src/llm/cassette.h): the programmer's three turns, then
the profiling agent's analysis, then the memory notes. What the tools answer, what the validator
finds, whether the candidate builds and how fast it is are real: only the model's words are
scripted.

The story (one iteration, two candidates):
  turn 1   search_cutlass twice: the cooperative warp-specialised kernel schedule, and the
           64x256x16 bf16 GMMA atom
  turn 2   read_cutlass_file around the schedule it found, list_cutlass_directory of the SM90
           builders, and check_smem_layout of the 128-byte-swizzled K-major bf16 tile of four
           stages its mainloop will use
  turn 3   two candidates: the CUTLASS 3 GEMM (128x256x64 tiles, 2x1 cluster, TMA, GMMA) giving
           no include path and no CUTLASS flag (the build step adds them), and the same kernel
           with plain sm_90 flags, which the constraint validator rejects before any build
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEM = os.path.dirname(HERE)
MODEL = "kernelpro-demo (hand-written)"
RECORDED_AT = "2026-12-02T00:00:00.000Z"


def cutlass_source():
    """_DECL, _KERNELS and _HOST of the hand-written candidate (candidates/cuda_gemm_cutlass.py),
    which check_build.sh compiles standalone: the demo reuses the kernel and changes the build."""
    with open(os.path.join(PROBLEM, "candidates", "cuda_gemm_cutlass.py")) as f:
        text = f.read()
    start = text.index('_DECL = ')
    end = text.index('\n\ndef _cutlass_include_dir')
    # Its comment names the flags a standalone nvcc needs; the demo's point is to give none.
    lines = [l for l in text[start:end].rstrip().split("\n") if not l.startswith("# ")]
    return "\n".join(lines) + "\n"


TEMPLATE = '''"""{doc}

CUTLASS demo candidate for problems/gemm_bf16, written by the kernelpro project.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

{source}

_ext = load_inline(
    name="{name}",
    cpp_sources=_DECL,
    cuda_sources=_KERNELS + _HOST,
    functions=["gemm_bf16_forward"],
    extra_cuda_cflags=[
        "-O3",{arch}
        # torch disables the half/bf16 conversions and operators that CUTLASS's types use.
        "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "-U__CUDA_NO_BFLOAT16_OPERATORS__", "-U__CUDA_NO_BFLOAT162_OPERATORS__",
        "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
        "-DNDEBUG",
    ],
    verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.gemm_bf16_forward(A.contiguous(), B.contiguous())
'''

CANDIDATES = [
    ("cutlass_build_flags", "kp_gemm_bf16_demo",
     "A CUTLASS 3 warp-specialised cooperative GEMM (128x256x64 tiles, 2x1x1 cluster, TMA loads,\n"
     "GMMA 64x256x16 bf16) that gives no include path and no CUTLASS flag: the build step adds\n"
     "them (-I, -std=c++17, --expt-relaxed-constexpr, sm_90a on Hopper).",
     "",
     "CUTLASS 3 cooperative warp-specialised GEMM: TMA + GMMA 64x256x16, 128x256x64 tiles and a "
     "2x1 cluster; the build adds the CUTLASS flags"),
    ("cutlass_sm90_flags", "kp_gemm_bf16_demo_sm90",
     "The same kernel built for plain sm_90, where warpgroup MMA does not exist: the constraint\n"
     "validator rejects it before a build is spent.",
     '\n        "-gencode=arch=compute_90,code=sm_90",',
     "the same GEMM with an explicit sm_90 target"),
]


def tool_call(call_id, name, arguments):
    return {"id": call_id, "name": name, "arguments": arguments}


TURNS = [
    [tool_call("call_1", "search_cutlass",
               {"regex": "struct KernelTmaWarpSpecializedCooperative\\b", "path": "cutlass/gemm/"}),
     tool_call("call_2", "search_cutlass",
               {"regex": "struct MMA_64x256x16_F32BF16BF16_SS", "path": "cute/arch/"})],
    [tool_call("call_3", "read_cutlass_file",
               {"file": "cutlass/gemm/dispatch_policy.hpp", "start_line": 110, "end_line": 140}),
     tool_call("call_4", "list_cutlass_directory", {"dir": "cutlass/gemm/collective/builders"}),
     tool_call("call_5", "check_smem_layout",
               {"element_type": "cutlass::bfloat16_t",
                "atom": "GMMA::Layout_K_SW128_Atom<Element>{}",
                "tile_shape": "Shape<_128,_64,_4>"})],
]

ANALYSIS = {
    "bottleneck": "compute",
    "severity": "low",
    "summary": "The GEMM runs on the tensor cores (HGMMA in the SASS) near the bf16 roofline; "
               "what is left is the tail of the persistent schedule and the epilogue.",
    "recommendations": [
        {"priority": 1, "action": "Try a 256x128 tile with a 1x2 cluster and compare.",
         "rationale": "The other tile orientation changes which operand is multicast."},
    ],
}

NOTES = {
    "search_findings": ["KernelTmaWarpSpecializedCooperative is in cutlass/gemm/dispatch_policy.hpp."],
    "errors_and_corrections": ["Plain sm_90 flags are rejected for GMMA code: build for sm_90a."],
    "successful_patterns": ["The SM90 collective builders with a 128x256x64 tile and a 2x1 cluster."],
    "key_files": [],
    "learnings": [],
}


def recording(user, schema, response, system, input_tokens, output_tokens):
    base = {
        "attempts": 1, "input_tokens": input_tokens, "latency_ms": 0, "model": MODEL,
        "output_tokens": output_tokens, "provider_stop_reason": "end_turn", "stop_reason": "end",
        "structured": None, "text": "", "tool_calls": [],
    }
    base.update(response)
    return {
        "fingerprint": "hand-written: replay with replay_mode = sequential",
        "model": MODEL,
        "provider": "kernelpro-demo",
        "recorded_at": RECORDED_AT,
        "request": {
            "max_tokens": 16384,
            "messages": [{"role": "user", "text": "(abbreviated) " + user}],
            "response_schema": {"name": schema, "schema": {"type": "object"}},
            "stop": [],
            "system": "(abbreviated) " + system,
            "tools": [],
        },
        "response": base,
    }


def main():
    source = cutlass_source()
    folder = os.path.join(HERE, "cuda")
    os.makedirs(folder, exist_ok=True)
    candidates = []
    for stem, name, doc, arch, strategy in CANDIDATES:
        text = TEMPLATE.format(doc=doc, source=source, name=name, arch=arch)
        assert not re.search(r"extra_include_paths|expt-relaxed|std=c\+\+", text.split(chr(34) * 3, 2)[2])
        with open(os.path.join(folder, stem + ".py"), "w") as out:
            out.write(text)
        candidates.append({"strategy": strategy, "code": text})

    lines = []
    for i, calls in enumerate(TURNS):
        lines.append(recording(
            "Initial: write two CUTLASS candidates for gemm_bf16 (turn %d)." % (i + 1),
            "candidates",
            {"stop_reason": "tool_use", "provider_stop_reason": "tool_use", "tool_calls": calls},
            "You are the programmer agent.", 9000 + 3000 * i, 200))
    lines.append(recording(
        "Initial: write two CUTLASS candidates for gemm_bf16 (answer).", "candidates",
        {"structured": {"candidates": candidates}}, "You are the programmer agent.", 16000, 9000))
    lines.append(recording("Analyse this profile.", "profile_analysis", {"structured": ANALYSIS},
                           "You are the profiling agent.", 2200, 300))
    lines.append(recording("Iteration 1: what should later iterations know?", "search_memory_notes",
                           {"structured": NOTES}, "You keep the notes of the run.", 1500, 150))
    with open(os.path.join(HERE, "cutlass.jsonl"), "w") as out:
        for line in lines:
            out.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
