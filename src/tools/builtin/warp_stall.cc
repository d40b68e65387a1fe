// warp_stall: why warps fail to issue. Finds the dominant stall reason among ncu's per-warp stall
// counters and dispatches a root cause and fixes specific to that reason (paper appendix B,
// WarpStallTool).
//
// Hopper note: the paper's WarpStallTool reads a `memory_dependency` stall. That reason was
// retired with Volta and does not exist on Hopper (ncu --query-metrics of the H200 lacks it);
// Volta split it into the long scoreboard (L1TEX: global, local, surface, texture memory) and the
// short scoreboard (MIO: shared memory, special math). long_scoreboard is therefore the Hopper
// equivalent of the paper's memory-dependency stall (kNcuMemoryDependencyStall).
//
// `not_selected` is reported but never counted as the dominant *problem*: a warp that was eligible
// but not picked means the scheduler had work, the opposite of a stall. `drain` is optional (the
// H200 fixtures do not collect it).
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;

struct StallReason {
  const char* key;     // short name used in text ("long_scoreboard")
  const char* metric;  // full ncu name
};

constexpr StallReason kReasons[] = {
    {"long_scoreboard", "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct"},
    {"short_scoreboard", "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct"},
    {"barrier", "smsp__warp_issue_stalled_barrier_per_warp_active.pct"},
    {"branch_resolving", "smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct"},
    {"membar", "smsp__warp_issue_stalled_membar_per_warp_active.pct"},
    {"lg_throttle", "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct"},
    {"mio_throttle", "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct"},
    {"tex_throttle", "smsp__warp_issue_stalled_tex_throttle_per_warp_active.pct"},
    {"math_pipe_throttle", "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct"},
    {"wait", "smsp__warp_issue_stalled_wait_per_warp_active.pct"},
    {"dispatch_stall", "smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct"},
    {"no_instruction", "smsp__warp_issue_stalled_no_instruction_per_warp_active.pct"},
    {"not_selected", "smsp__warp_issue_stalled_not_selected_per_warp_active.pct"},
};
constexpr const char* kDrain = "smsp__warp_issue_stalled_drain_per_warp_active.pct";

struct Advice {
  std::string title;
  std::string root_cause;
  std::vector<Recommendation> recommendations;
  // Most reasons have none; the initialiser lets their table entries leave it out.
  std::string code_example = "";
};

using AdviceTable = std::map<std::string, Advice, std::less<>>;

// Warps held by their own synchronisation: block barriers and memory fences.
AdviceTable SynchronisationStallAdvice() {
  return {
      {"barrier",
       {.title = "Warps wait at block barriers (__syncthreads)",
        .root_cause =
            "Warps reach __syncthreads() at different times and idle until the slowest warp of the "
            "block arrives: too many barriers, or uneven work between the warps of a block.",
        .recommendations =
            {{"Replace block-wide reductions and exchanges with warp primitives (__shfl_*_sync, "
              "__reduce_*_sync) so most steps need no barrier",
              "1.2-2x on reduction-heavy kernels"},
             {"Remove barriers that protect nothing and merge consecutive ones; double-buffer "
              "shared tiles so one barrier per tile suffices",
              "1.1-1.5x"},
             {"Balance work between warps before each barrier; use smaller blocks so fewer "
              "warps wait",
              "1.1-1.3x"}},
        .code_example =
            "float v = partial;\n"
            "for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);\n"
            "// lane 0 holds the warp's sum: no __syncthreads() needed inside the warp"}},
      {"membar",
       {.title = "Warps wait on memory fences (membar)",
        .root_cause =
            "__threadfence() or system-scope fences force warps to wait for all prior writes.",
        .recommendations = {
            {"Remove fences that order nothing; use block-scope fences or release/acquire "
             "atomics instead of device/system-wide fences",
             "1.1-2x"}}}}};
}

// Warps held by the memory units: waiting on a shared-memory or special-function result, or
// on a full memory-instruction queue.
AdviceTable MemoryUnitStallAdvice() {
  return {
      {"short_scoreboard",
       {.title = "Warps wait on shared-memory or special-function results (short scoreboard)",
        .root_cause =
            "Short-scoreboard stalls mean an instruction needs the result of a shared-memory "
            "access or a special-function (MUFU: exp, rcp, rsqrt, sin) instruction. Bank conflicts "
            "or dense dependent MUFU chains lengthen the wait.",
        .recommendations =
            {{"Remove shared-memory bank conflicts (pad the inner dimension by one word or "
              "swizzle)",
              "1.2-2x on shared-memory-bound loops"},
             {"Keep reused values in registers instead of re-reading shared memory; load "
              "several values before using the first",
              "1.1-1.5x"},
             {"Use fast intrinsics (__expf, __fdividef, rsqrtf) and hoist special functions out "
              "of loops",
              "1.1-1.3x"}}}},
      {"lg_throttle",
       {.title = "The local/global memory queue is full (LG throttle)",
        .root_cause = "Warps issue more global or local memory instructions than the load/store "
                      "unit queue accepts: typically many narrow (32-bit) accesses per thread, or "
                      "register-spill traffic.",
        .recommendations =
            {{"Load each global value once into shared memory (tiling) instead of every thread "
              "issuing its own loads inside the loop",
              "1.5-3x on loops that re-read global data"},
             {"Vectorise: one float4/int4 access instead of four 32-bit ones",
              "1.2-2x fewer LSU instructions"},
             {"Eliminate local-memory spills if the SASS shows LDL/STL",
              "removes the extra instructions"}}}},
      {"mio_throttle",
       {.title = "The MIO queue is full (shared memory / special functions)",
        .root_cause =
            "The memory-input/output queue that feeds shared memory, special-function units and "
            "some data-movement instructions is saturated: too many shared-memory accesses (often "
            "narrow or bank-conflicted) or MUFU instructions.",
        .recommendations =
            {{"Use wider shared-memory accesses (LDS.64/128, ldmatrix for MMA operands) and "
              "keep reused values in registers",
              "1.2-2x"},
             {"Remove shared-memory bank conflicts (padding or swizzling)", "1.1-1.5x"},
             {"Reduce special-function calls (fast intrinsics, hoisting)", "1.1-1.3x"}}}},
      {"tex_throttle",
       {.title = "The texture queue is full (TEX throttle)",
        .root_cause =
            "Too many texture/surface (or __ldg through the texture path) requests are in flight.",
        .recommendations = {
            {"Use wider loads and fewer texture fetches; load through plain global memory when "
             "the texture cache adds nothing",
             "1.1-1.5x"}}}}};
}

// Warps held at issue: branches, busy math pipes, dependency chains, the dispatcher and
// instruction fetch.
AdviceTable IssueStallAdvice() {
  return {
      {"branch_resolving",
       {.title = "Warps wait for branch targets to resolve",
        .root_cause = "The warp cannot issue until a branch target and its divergence mask are "
                      "computed; many short data-dependent branches make this the bottleneck.",
        .recommendations =
            {{"Turn short data-dependent branches into predicated arithmetic (select, "
              "fminf/fmaxf, multiplying by a 0/1 mask)",
              "1.1-1.5x"},
             {"Unroll loops with known trip counts (#pragma unroll) to remove loop branches",
              "1.1-1.3x"}}}},
      {"math_pipe_throttle",
       {.title = "A math pipe is saturated (math-pipe throttle)",
        .root_cause = "Warps are ready but the execution pipe they need (FMA, ALU, FP64 or tensor) "
                      "is busy: the kernel is limited by one unit's throughput.",
        .recommendations =
            {{"Move matrix-shaped work to tensor cores (mma.sync/WMMA, or warpgroup MMA on "
              "Hopper)",
              "several x for GEMM-like loops"},
             {"Spread work across pipes: integer index math on the ALU vs FP32 on FMA, avoid "
              "FP64 where FP32 suffices, use half2/bf162 packed math",
              "1.1-2x"},
             {"Remove redundant arithmetic (strength reduction, hoisting loop invariants)",
              "1.1-1.3x"}}}},
      {"wait",
       {.title = "Warps wait on fixed-latency dependencies",
        .root_cause =
            "Each instruction depends on the one just before it (fixed-latency ALU/FMA chains) and "
            "there are too few independent instructions or warps to fill the gap.",
        .recommendations =
            {{"Increase instruction-level parallelism: compute several independent outputs per "
              "thread (unroll with separate accumulators)",
              "1.2-2x"},
             {"Raise occupancy so other warps fill the dependency gaps", "1.1-1.5x"}}}},
      {"dispatch_stall",
       {.title = "Warps are held by the dispatcher",
        .root_cause = "The dispatcher could not issue a selected instruction (pipe or "
                      "register-file conflict).",
        .recommendations =
            {{"Mix instruction types so consecutive instructions use different pipes",
              "1.05-1.2x"}}}},
      {"no_instruction",
       {.title = "Warps wait for instructions to be fetched",
        .root_cause = "The instruction cache misses or the warp waits after a branch: very large "
                      "unrolled kernels, or very short kernels where every warp starts cold.",
        .recommendations = {
            {"Limit unrolling of very long loop bodies so the hot loop fits the instruction "
             "cache",
             "1.1-1.3x"},
            {"For tiny kernels, fuse them with neighbours so start-up costs are amortised",
             "depends on launch count"}}}}};
}

// The advice for each stall reason whose fix does not depend on the kernel (long_scoreboard's
// does: AdviceFor writes it out). Any other reason (drain) gets no_instruction's.
const AdviceTable& FixedAdvice() {
  static const AdviceTable* const kAdvice = [] {
    auto* advice = new AdviceTable(SynchronisationStallAdvice());
    advice->merge(MemoryUnitStallAdvice());
    advice->merge(IssueStallAdvice());
    return advice;
  }();
  return *kAdvice;
}

Advice AdviceFor(const std::string& reason, const ToolContext& c, bool bandwidth_saturated,
                 bool streaming) {
  Advice a;
  const bool hopper = c.sm_major >= 9;
  if (reason == "long_scoreboard" && bandwidth_saturated) {
    a.title = "Warps wait on global memory, and memory bandwidth is already nearly saturated";
    a.root_cause =
        "Long-scoreboard stalls (the Hopper form of the memory-dependency stall) mean warps wait "
        "for "
        "global/local memory results. Here the memory system is already close to its peak, so the "
        "wait is the cost of moving the bytes, not latency left unhidden: prefetching or more "
        "occupancy will not help much.";
    a.recommendations = {
        {"Move fewer bytes: fuse this kernel with its producer or consumer so intermediates stay "
         "on "
         "chip, and read each input once",
         "proportional to the bytes removed"},
        {"Store inputs or intermediates in a narrower type (bf16/fp16/fp8) where accuracy allows",
         "up to 2x for a 32->16-bit change"},
    };
    return a;
  }
  if (reason == "long_scoreboard" && streaming) {
    // Each byte is read from DRAM about once (L1 requests ~ DRAM reads): there is no reuse for
    // shared-memory tiling to capture; the fix is more bytes in flight per thread.
    a.title = "Warps wait on streamed global loads: too few bytes in flight";
    a.root_cause =
        "Long-scoreboard stalls (the Hopper equivalent of the paper's memory-dependency stall) on "
        "a "
        "kernel that reads each byte about once: there is no reuse to cache, and each warp waits "
        "for "
        "one load at a time, so DRAM latency is exposed instead of overlapped.";
    a.recommendations = {
        {"Keep several independent 16-byte loads in flight per thread: float4 loads, unrolled 2-4 "
         "times "
         "(or a grid-stride loop that issues all loads before the first use)",
         "1.2-1.6x, toward the DRAM bandwidth bound"},
        {"Launch enough blocks to fill every SM several times over (at least 2 waves) so other "
         "warps cover the wait",
         "up to 1.3x when the grid is small"},
        {"Move fewer bytes: fuse with the producer or consumer kernel, or use a narrower type "
         "where accuracy allows",
         "proportional to the bytes removed"},
    };
    a.code_example =
        "// 4 independent float4 loads in flight per thread before any use\n"
        "float4 v[4];\n"
        "#pragma unroll\n"
        "for (int u = 0; u < 4; ++u) v[u] = in4[base + u * stride];\n"
        "#pragma unroll\n"
        "for (int u = 0; u < 4; ++u) out4[base + u * stride] = f(v[u]);";
    return a;
  }
  if (reason == "long_scoreboard") {
    a.title = "Warps mostly wait on global-memory loads (long scoreboard)";
    a.root_cause =
        "Long-scoreboard stalls (the Hopper equivalent of the paper's memory-dependency stall) "
        "mean "
        "an instruction needs the result of a global or local memory access that has not arrived. "
        "Global-memory latency (hundreds of cycles) is not hidden by other work.";
    a.recommendations = {
        {"Stage reused data in shared memory (tiling) so each global value is loaded once per "
         "block",
         "1.5-3x when data is reused across threads"},
        {std::string("Prefetch the next tile while computing the current one: ") +
             (hopper
                  ? "TMA (cp.async.bulk) with an mbarrier on Hopper, or cp.async double buffering"
                  : "cp.async double buffering"),
         "1.2-2x by overlapping loads with compute"},
        {"Issue wider, independent loads: float4 vector loads and several loads in flight per "
         "thread "
         "(unroll) before the first use",
         "1.2-1.5x"},
        {"If the loads come from register spills (local memory), reduce register pressure",
         "removes the spill traffic"},
    };
    a.code_example =
        "// double-buffered tile loads with cp.async (Ampere+)\n"
        "__pipeline_memcpy_async(&tile[next][ty][tx], &A[row * K + k + BK], sizeof(float));\n"
        "__pipeline_commit();\n"
        "compute(tile[cur]);            // overlaps with the copy in flight\n"
        "__pipeline_wait_prior(0); __syncthreads();";
    return a;
  }
  const auto& fixed = FixedAdvice();
  auto it = fixed.find(reason);
  return it != fixed.end() ? it->second : fixed.at("no_instruction");
}

class WarpStallTool : public ProfilingTool {
 public:
  std::string name() const override { return "warp_stall"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Dominant warp-stall reason (long scoreboard, barrier, throttles, ...) with a "
           "reason-specific fix";
  }
  std::vector<std::string> required_metrics() const override {
    std::vector<std::string> names;
    for (const StallReason& r : kReasons) names.emplace_back(r.metric);
    return names;
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"high", 40, "%", "dominant stall above this share of active-warp cycles triggers (high)"},
        {"critical", 60, "%", "dominant stall at or above this is critical"},
        {"saturated_memory", 80, "%",
         "memory throughput at or above this turns a long-scoreboard finding into a bytes problem "
         "(low severity)"},
        {"reuse_factor", 1.5, "x",
         "global load sectors below this multiple of the DRAM sectors read: a streaming kernel, so "
         "long-scoreboard advice is about bytes in flight, not tiling"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override { return ncu_tools::AllClasses(); }
  int priority() const override { return 80; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    struct Entry {
      std::string key;
      std::string metric;
      double value;
    };
    std::vector<Entry> stalls;
    for (const StallReason& r : kReasons) stalls.push_back({r.key, r.metric, m.Get(r.metric)});
    if (m.Has(kDrain)) stalls.push_back({"drain", kDrain, m.Get(kDrain)});
    // Largest first; ties broken by the fixed order above (stable sort), so output is
    // deterministic.
    std::stable_sort(stalls.begin(), stalls.end(),
                     [](const Entry& a, const Entry& b) { return a.value > b.value; });
    const Entry* dominant = nullptr;
    for (const Entry& e : stalls) {
      if (e.key != "not_selected") {
        dominant = &e;
        break;
      }
    }
    const double high = Threshold(c, "high");
    const double critical = Threshold(c, "critical");
    out.triggered = dominant->value > high;
    for (const Entry& e : stalls) {
      if (&e == dominant || e.value >= 10) out.observed.push_back({e.metric, e.value, "%"});
    }
    if (!out.triggered) return out;

    const std::string dom = dominant->key;
    std::optional<double> mem = m.Find(profile::kNcuMemoryThroughputPct);
    const bool saturated =
        dom == "long_scoreboard" && mem && *mem >= Threshold(c, "saturated_memory");
    out.severity = dominant->value >= critical ? Severity::kCritical : Severity::kHigh;
    if (saturated) out.severity = Severity::kLow;
    if (mem) out.observed.push_back({S(profile::kNcuMemoryThroughputPct), *mem, "%"});

    // Streaming: the global load sectors L1 handled are about the DRAM sectors read, i.e. no reuse.
    bool streaming = false;
    if (auto l1 = m.Find(profile::kNcuGlobalLoadSectors), dram = m.Find(profile::kNcuDramBytesRead);
        l1 && dram && *dram > 0) {
      streaming = *l1 * 32.0 < Threshold(c, "reuse_factor") * *dram;
    }
    Advice advice = AdviceFor(dom, c, saturated, streaming);
    out.title = advice.title;
    out.summary = "The dominant stall is " + dom + " at " + Pct(dominant->value) +
                  " of active-warp cycles (trigger above " + Pct(high) + ", critical from " +
                  Pct(critical) + ").";
    std::string others;
    int listed = 0;
    for (const Entry& e : stalls) {
      if (&e == dominant || e.value < 10 || listed == 3) continue;
      others += (listed ? ", " : "") + e.key + " " + Pct(e.value);
      ++listed;
    }
    if (!others.empty()) out.summary += " Next: " + others + ".";
    if (saturated) {
      out.summary += " Memory throughput is already " + Pct(*mem) + " of peak.";
    }
    out.root_cause = advice.root_cause;
    out.recommendations = advice.recommendations;
    out.code_example = advice.code_example;
    return out;
  }

 private:
  static std::string S(std::string_view v) { return std::string(v); }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeWarpStallTool() { return std::make_unique<WarpStallTool>(); }

}  // namespace kernelpro::tools
