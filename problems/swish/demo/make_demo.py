#!/usr/bin/env python3
"""Writes the demo of `kernelpro optimize --demo`: candidate kernels for problems/swish and the two
replay cassettes that hand them to the search as if a model had written them.

    python3 problems/swish/demo/make_demo.py      (from anywhere; rewrites cuda/, cpu/, *.jsonl)

Everything here is written by the kernelpro project, not captured from a model. The cassettes
are replayed in sequential order per stream (programmer candidates, profiling analyses, memory
notes: see src/llm/cassette.h), so the search gets the same replies whatever it measures; what it
measures (correctness, speedups, profiles) is real.

The story, the same on both devices (4 iterations, 2 candidates each):

  1 initial   a kernel that forgets the multiply (incorrect) and one calling an undeclared helper
              (compile error): both fail, so MCTS goes on to repair the incorrect one
  2 debug     two correct repairs: one thread per element, and a grid-stride loop
  3 optimize  vectorised versions (CUDA: float4 loads and stores over one wave of blocks;
              CPU: glibc's vector expf through -ffast-math, and threads)
  4 optimize  two more variants (CUDA: two float4 per thread with streaming stores, and evict-first
              loads; CPU: vectorised and threaded in one, and a smaller grain)

On an H200 every correct CUDA candidate is memory-bound and lands near HBM bandwidth (about twice
eager's speed, which moves the tensor three times), so the later variants are rarely clearly
faster than their parents: the report's intervals show it.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "kernelpro-demo (hand-written)"
RECORDED_AT = "2026-11-30T00:00:00.000Z"

# ---------------------------------------------------------------------------------------- CUDA

CUDA_TEMPLATE = '''"""{doc}

Demo candidate for problems/swish (kernelpro optimize --demo), written by the kernelpro project.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor swish_forward(torch::Tensor x);"

_KERNELS = r"""
#include <cstdint>
{kernels}
"""

_HOST = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>

torch::Tensor swish_forward(torch::Tensor x) {{
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CUDA tensor");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t n = x.numel();
  if (n == 0) return y;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  (void)sms;
{launch}
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}}
"""

_ext = load_inline(name="{name}", cpp_sources=_DECL, cuda_sources=_KERNELS + _HOST,
                   functions=["swish_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish_forward(x.contiguous())
'''

ONE_PER_ELEMENT_LAUNCH = '''  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  swish_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);'''

GRID_STRIDE_LAUNCH = '''  const int threads = 256;
  const int64_t blocks = std::min((n + threads - 1) / threads, sms * (2048 / threads));
  swish_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);'''

# x and y come from torch's allocator (aligned); a misaligned view falls back to the scalar loop.
VEC4_LAUNCH = '''  const int threads = 256;
  const bool aligned = (reinterpret_cast<uintptr_t>(xp) % 16 == 0) &&
                       (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
  const int64_t work = aligned ? (n >> 2) / {per_thread} + 1 : n;
  const int64_t blocks = std::max<int64_t>(1, std::min((work + threads - 1) / threads,
                                                       sms * (2048 / threads)));
  if (aligned) {{
    swish_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  }} else {{
    swish_scalar_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  }}'''

SCALAR_FALLBACK = '''
__global__ void __launch_bounds__(256) swish_scalar_kernel(const float* __restrict__ x,
                                                           float* __restrict__ y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = swish1(x[i]);
}

// The n % 4 elements after the last float4, done by block 0.
__device__ __forceinline__ void swish_tail(const float* __restrict__ x, float* __restrict__ y,
                                           int64_t n) {
  if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
    const int64_t i = ((n >> 2) << 2) + threadIdx.x;
    y[i] = swish1(x[i]);
  }
}
'''

FAST_SWISH = "\n__device__ __forceinline__ float swish1(float v) { return v / (1.0f + __expf(-v)); }\n"

CUDA = [
    ("01_sigmoid_only", "kp_demo_swish_sigmoid_only",
     "One thread per element computing the sigmoid (forgets the multiply by x: incorrect).",
     '''
__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 1.0f / (1.0f + expf(-x[i]));
}
''', ONE_PER_ELEMENT_LAUNCH),
    ("02_undeclared_helper", "kp_demo_swish_undeclared",
     "One thread per element through a sigmoid helper that is never declared (does not compile).",
     '''
__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * sigmoid_fast(x[i]);
}
''', ONE_PER_ELEMENT_LAUNCH),
    ("03_one_per_element", "kp_demo_swish_one_per_element",
     "One thread per element: y = x / (1 + exp(-x)), one read and one write of the tensor.",
     '''
__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
}
''', ONE_PER_ELEMENT_LAUNCH),
    ("04_grid_stride", "kp_demo_swish_grid_stride",
     "A grid-stride loop over one wave of resident blocks, with __expf.",
     FAST_SWISH + '''
__global__ void __launch_bounds__(256) swish_kernel(const float* __restrict__ x,
                                                    float* __restrict__ y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = swish1(x[i]);
}
''', GRID_STRIDE_LAUNCH),
    ("05_float4", "kp_demo_swish_float4",
     "16-byte float4 loads and stores in a grid-stride loop over one wave of blocks.",
     FAST_SWISH + SCALAR_FALLBACK + '''
__global__ void __launch_bounds__(256) swish_vec4_kernel(const float* __restrict__ x,
                                                         float* __restrict__ y, int64_t n) {
  const int64_t n4 = n >> 2;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = __ldg(x4 + i);
    v.x = swish1(v.x);
    v.y = swish1(v.y);
    v.z = swish1(v.z);
    v.w = swish1(v.w);
    y4[i] = v;
  }
  swish_tail(x, y, n);
}
''', VEC4_LAUNCH.format(per_thread=1)),
    ("06_float4_x2_streaming", "kp_demo_swish_float4_x2",
     "Two float4 per thread per step (more bytes in flight) and streaming stores (__stcs).",
     FAST_SWISH + SCALAR_FALLBACK + '''
__device__ __forceinline__ float4 swish4(float4 v) {
  v.x = swish1(v.x);
  v.y = swish1(v.y);
  v.z = swish1(v.z);
  v.w = swish1(v.w);
  return v;
}

__global__ void __launch_bounds__(256) swish_vec4_kernel(const float* __restrict__ x,
                                                         float* __restrict__ y, int64_t n) {
  const int64_t n4 = n >> 2;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + stride < n4; i += 2 * stride) {
    const float4 a = __ldg(x4 + i);
    const float4 b = __ldg(x4 + i + stride);
    __stcs(y4 + i, swish4(a));
    __stcs(y4 + i + stride, swish4(b));
  }
  if (i < n4) __stcs(y4 + i, swish4(__ldg(x4 + i)));
  swish_tail(x, y, n);
}
''', VEC4_LAUNCH.format(per_thread=2)),
    ("07_float4_evict_first", "kp_demo_swish_float4_evict_first",
     "float4 with evict-first loads (__ldcs) and streaming stores: x and y are touched once, so "
     "neither should displace the other in L2.",
     FAST_SWISH + SCALAR_FALLBACK + '''
__global__ void __launch_bounds__(256) swish_vec4_kernel(const float* __restrict__ x,
                                                         float* __restrict__ y, int64_t n) {
  const int64_t n4 = n >> 2;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = __ldcs(x4 + i);
    v.x = swish1(v.x);
    v.y = swish1(v.y);
    v.z = swish1(v.z);
    v.w = swish1(v.w);
    __stcs(y4 + i, v);
  }
  swish_tail(x, y, n);
}
''', VEC4_LAUNCH.format(per_thread=1)),
    ("08_float4_one_per_thread", "kp_demo_swish_float4_flat",
     "float4 with one vector per thread and no loop: a grid of n/4 threads, no loop overhead.",
     FAST_SWISH + SCALAR_FALLBACK + '''
__global__ void __launch_bounds__(256) swish_flat4_kernel(const float* __restrict__ x,
                                                          float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (n >> 2)) {
    float4 v = __ldg(reinterpret_cast<const float4*>(x) + i);
    v.x = swish1(v.x);
    v.y = swish1(v.y);
    v.z = swish1(v.z);
    v.w = swish1(v.w);
    reinterpret_cast<float4*>(y)[i] = v;
  }
  swish_tail(x, y, n);
}
''', '''  const int threads = 256;
  const bool aligned = (reinterpret_cast<uintptr_t>(xp) % 16 == 0) &&
                       (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
  if (aligned) {
    const int64_t blocks = std::max<int64_t>(1, ((n >> 2) + threads - 1) / threads);
    swish_flat4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  } else {
    const int64_t blocks = std::min((n + threads - 1) / threads, sms * (2048 / threads));
    swish_scalar_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, n);
  }'''),
]

# ----------------------------------------------------------------------------------------- CPU

CPU_TEMPLATE = '''"""{doc}

Demo candidate for problems/swish on the CPU (kernelpro optimize --demo --device cpu), written by
the kernelpro project.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor swish_forward(torch::Tensor x) {{
  TORCH_CHECK(x.device().is_cpu() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "x must be a contiguous float32 CPU tensor");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const float* __restrict__ in = x.data_ptr<float>();
  float* __restrict__ out = y.data_ptr<float>();
  const int64_t n = x.numel();
{body}
  return y;
}}
"""

_ext = load_inline(name="{name}", cpp_sources=_CPP, functions=["swish_forward"],
                   extra_cflags=[{cflags}]{ldflags}, verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.swish_forward(x.contiguous())
'''

PLAIN = '"-O3"'
VECTOR = '"-O3", "-ffast-math", "-march=native"'
MVEC = ', extra_ldflags=["-lmvec"]'

CPU = [
    ("01_sigmoid_only", "kp_demo_cpu_swish_sigmoid_only",
     "One loop computing the sigmoid (forgets the multiply by x: incorrect).",
     "  for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + std::exp(-in[i]));", PLAIN, ""),
    ("02_undeclared_helper", "kp_demo_cpu_swish_undeclared",
     "One loop through a sigmoid helper that is never declared (does not compile).",
     "  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * sigmoid_fast(in[i]);", PLAIN, ""),
    ("03_one_loop", "kp_demo_cpu_swish_one_loop",
     "One fused loop on one thread: y = x / (1 + exp(-x)), one read and one write.",
     "  for (int64_t i = 0; i < n; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));", PLAIN, ""),
    ("04_threads", "kp_demo_cpu_swish_threads",
     "The fused loop split across threads with at::parallel_for.",
     "  at::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {\n"
     "    for (int64_t i = begin; i < end; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));\n"
     "  });", PLAIN, ""),
    ("05_vector_expf", "kp_demo_cpu_swish_vector",
     "The fused loop vectorised by the compiler: -ffast-math lets it call glibc's vector expf "
     "(libmvec).",
     "  for (int64_t i = 0; i < n; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));", VECTOR, MVEC),
    ("06_vector_threads", "kp_demo_cpu_swish_vector_threads",
     "Vectorised (libmvec expf) and split across threads in chunks of 64 Ki elements.",
     "  at::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {\n"
     "    for (int64_t i = begin; i < end; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));\n"
     "  });", VECTOR, MVEC),
    ("07_vector_threads_small_grain", "kp_demo_cpu_swish_small_grain",
     "Vectorised and threaded with a smaller grain (8 Ki elements) for better balance.",
     "  at::parallel_for(0, n, 1 << 13, [&](int64_t begin, int64_t end) {\n"
     "    for (int64_t i = begin; i < end; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));\n"
     "  });", VECTOR, MVEC),
    ("08_vector_threads_sigmoid", "kp_demo_cpu_swish_sigmoid_form",
     "Vectorised and threaded, written as x * sigmoid(x) with the sigmoid inline.",
     "  at::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {\n"
     "    for (int64_t i = begin; i < end; ++i) {\n"
     "      const float v = in[i];\n"
     "      out[i] = v * (1.0f / (1.0f + std::exp(-v)));\n"
     "    }\n"
     "  });", VECTOR, MVEC),
]

# ------------------------------------------------------------------- the replies around the code

# Strategies as the programmer states them, one pair per iteration, for both devices.
STRATEGIES = {
    "cuda": [
        ("fused kernel, one thread per element, sigmoid then store", "fused kernel through a fast sigmoid helper"),
        ("debug: multiply by x, y = x / (1 + exp(-x)), one thread per element", "debug: grid-stride loop over one wave of blocks with __expf"),
        ("float4 loads and stores in a grid-stride loop (16-byte accesses)", "two float4 per thread per step with streaming stores"),
        ("float4 with evict-first loads and streaming stores", "float4, one vector per thread, no loop"),
    ],
    "cpu": [
        ("one loop computing the sigmoid", "one loop through a fast sigmoid helper"),
        ("debug: multiply by x, y = x / (1 + exp(-x)) in one loop", "debug: the fused loop across threads"),
        ("vectorise the loop with glibc's vector expf", "vectorised and threaded in one loop"),
        ("vectorised and threaded, smaller grain", "vectorised and threaded, x * sigmoid(x) form"),
    ],
}

PROMPTS = [
    "Initial: write two candidates for swish.",
    "Debug: the candidate's outputs differ from the reference.",
    "Improve the working candidate.",
    "Improve the working candidate.",
]

# What a profiling agent would say of the correct CUDA candidates, one per profile, in the order
# the search profiles them (iterations 2, 3, 4, two each). Written from the H200 runs of the
# project's swish candidates (tests/fixtures/h200-advise): memory-bound, long-scoreboard stalls.
ANALYSES = [
    ("memory: a streaming elementwise kernel bound by HBM bandwidth", "high",
     "One read and one write per element; the warps wait on global loads (long scoreboard).",
     [(1, "Load and store 16 bytes per thread (float4) so fewer, wider requests cover the tensor",
       "scalar 4-byte accesses issue four times the memory instructions for the same bytes"),
      (2, "Use __expf instead of expf", "the precise expf costs extra instructions per element")]),
    ("memory: bound by HBM bandwidth", "high",
     "The grid-stride loop keeps one wave resident; loads are still 4 bytes wide.",
     [(1, "Vectorise the loads and stores with float4",
       "wider accesses raise the bytes in flight per warp, which is what a long-scoreboard stall lacks")]),
    ("memory: near HBM bandwidth", "medium",
     "float4 accesses; the kernel is close to the memory roofline, little is left.",
     [(1, "Keep more bytes in flight per thread (two float4 per step)",
       "more independent loads hide latency when occupancy cannot grow"),
      (2, "Stream the output past L2 (__stcs)", "y is never read again by this kernel")]),
    ("memory: near HBM bandwidth", "medium",
     "Two float4 per step with streaming stores; gains over one float4 are within the noise.",
     [(1, "Try evict-first loads (__ldcs) as well", "x is read once; keeping it in L2 helps nothing")]),
    ("memory: near HBM bandwidth", "low",
     "Evict-first loads and streaming stores; the kernel moves the minimum bytes.",
     [(1, "Stop here: the remaining gap to the roofline is launch and tail effects",
       "every byte is read or written once, 16 bytes at a time")]),
    ("memory: near HBM bandwidth", "low",
     "One float4 per thread without a loop; as fast as the grid-stride version.",
     [(1, "Keep the grid-stride version", "it does the same work with a fixed grid")]),
]

# The memory extractor's notes, one per iteration.
NOTES = {
    "cuda": [
        {"errors_and_corrections": [
            "A swish kernel must return x * sigmoid(x); returning the sigmoid alone fails the check.",
            "sigmoid_fast is not a CUDA function: declare a __device__ helper before using it."],
         "search_findings": [], "successful_patterns": [], "key_files": [], "learnings": []},
        {"errors_and_corrections": [],
         "search_findings": ["Fused one-pass swish (one read, one write) beats eager's two kernels."],
         "successful_patterns": ["y = x / (1 + __expf(-x)) in a grid-stride loop over one wave of blocks."],
         "key_files": [], "learnings": ["The problem is memory-bound: bytes moved decide the time."]},
        {"errors_and_corrections": [],
         "search_findings": ["float4 accesses bring the kernel close to HBM bandwidth."],
         "successful_patterns": ["16-byte float4 loads/stores with a scalar fallback for misaligned views."],
         "key_files": [], "learnings": []},
        {"errors_and_corrections": [],
         "search_findings": ["Streaming stores and evict-first loads change little once accesses are 16 bytes wide."],
         "successful_patterns": [], "key_files": [],
         "learnings": ["Near the roofline, differences are within the timing noise: compare intervals, not estimates."]},
    ],
    "cpu": [
        {"errors_and_corrections": [
            "A swish kernel must return x * sigmoid(x); returning the sigmoid alone fails the check.",
            "sigmoid_fast is not declared anywhere: write the expression inline or declare the helper."],
         "search_findings": [], "successful_patterns": [], "key_files": [], "learnings": []},
        {"errors_and_corrections": [],
         "search_findings": ["A scalar loop on one thread is slower than eager, which is vectorised and threaded."],
         "successful_patterns": ["at::parallel_for splits the fused loop across threads."],
         "key_files": [], "learnings": []},
        {"errors_and_corrections": [],
         "search_findings": ["-ffast-math -march=native with -lmvec vectorises std::exp through glibc's libmvec."],
         "successful_patterns": ["Vectorised expf and threads together."], "key_files": [], "learnings": []},
        {"errors_and_corrections": [], "search_findings": ["The grain size changes little once the loop is vectorised."],
         "successful_patterns": [], "key_files": [], "learnings": []},
    ],
}


def recording(user, schema, structured, system, input_tokens, output_tokens):
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


def write_candidates(device, template, table):
    folder = os.path.join(HERE, device)
    os.makedirs(folder, exist_ok=True)
    sources = []
    for entry in table:
        if device == "cuda":
            stem, name, doc, kernels, launch = entry
            text = template.format(doc=doc, name=name, kernels=kernels.rstrip("\n"), launch=launch)
        else:
            stem, name, doc, body, cflags, ldflags = entry
            text = template.format(doc=doc, name=name, body=body, cflags=cflags, ldflags=ldflags)
        with open(os.path.join(folder, stem + ".py"), "w") as out:
            out.write(text)
        sources.append(text)
    return sources


def write_cassette(device, sources):
    lines = []
    for i, prompt in enumerate(PROMPTS):
        pair = STRATEGIES[device][i]
        code = sources[2 * i:2 * i + 2]
        lines.append(recording(
            prompt, "candidates",
            {"candidates": [{"strategy": s, "code": c} for s, c in zip(pair, code)]},
            "You are the programmer agent.", 3000 + 400 * i, 2500))
    if device == "cuda":
        for bottleneck, severity, summary, recs in ANALYSES:
            lines.append(recording(
                "Analyse this profile.", "profile_analysis",
                {"bottleneck": bottleneck, "severity": severity, "summary": summary,
                 "recommendations": [{"priority": p, "action": a, "rationale": r} for p, a, r in recs]},
                "You are the profiling agent.", 2200, 300))
    for i, notes in enumerate(NOTES[device]):
        lines.append(recording(f"Iteration {i + 1}: what should later iterations know?",
                               "search_memory_notes", notes, "You keep the notes of the run.", 1500, 150))
    with open(os.path.join(HERE, device + ".jsonl"), "w") as out:
        for line in lines:
            out.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")


def main():
    write_cassette("cuda", write_candidates("cuda", CUDA_TEMPLATE, CUDA))
    write_cassette("cpu", write_candidates("cpu", CPU_TEMPLATE, CPU))


if __name__ == "__main__":
    main()
