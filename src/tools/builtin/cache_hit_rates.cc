// cache_hit_rates: low L1/L2 hit rates that matter, i.e. reuse the caches miss.
//
// A low hit rate alone says nothing: a streaming kernel (swish, a copy) reads each byte once, so
// there is nothing to hit and L1 ~0 % / L2 ~50 % (its stores count as L2 hits) is the best it can
// do. The tool therefore needs evidence of reuse first. Let R = bytes requested by global loads
// (l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum x 32) and D = dram__bytes_read.sum. R / D is how
// many times each byte brought from DRAM is requested: ~1 for a streaming kernel (every request a
// new byte), several for a kernel whose threads or blocks read the same data. With R / D at or
// above min_reuse, data is reused and the hit rates say which cache lets it go:
//
//   L1: a low L1 hit rate means the reuse is served from L2 (~4x the latency, a fraction of the
//       bandwidth) instead of the SM. Unless the kernel already stages its tiles in shared memory:
//       tiled kernels (cuBLAS/CUTLASS, cp.async.cg) load each tile once per block, bypassing L1,
//       and leave the reuse across blocks to L2 by design. Shared-load wavefronts at or above
//       staged_share of the global-load sectors mark such a kernel, and the L1 case stays quiet.
//   L2: a low L2 hit rate with reuse means blocks that read the same data run too far apart for L2
//       to keep it, so DRAM reads it again.
//
// What the counters cannot show: a kernel that misses reuse in *both* caches requests about as many
// bytes as it reads from DRAM, exactly like a streaming kernel; telling them apart needs the unique
// footprint (the problem's input sizes), which the ncu view does not have. The tool stays quiet
// there rather than guess. Both hit rates count stores too (L1 stores as misses, L2
// write-allocations as hits), which errs towards quiet.
#include <algorithm>

#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;
using ncu_tools::S;

constexpr const char* kL1HitRate = "l1tex__t_sector_hit_rate.pct";
constexpr const char* kL2HitRate = "lts__t_sector_hit_rate.pct";
constexpr const char* kSharedLdWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
constexpr double kSectorBytes = 32;

class CacheHitRatesTool : public ProfilingTool {
 public:
  std::string name() const override { return "cache_hit_rates"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Memory-heavy kernel that reuses data but misses it in L1 or L2 (low hit rates where "
           "reuse exists)";
  }
  std::vector<std::string> required_metrics() const override {
    return {S(profile::kNcuGlobalLoadSectors), S(profile::kNcuDramBytesRead), kL1HitRate,
            kL2HitRate, kSharedLdWavefronts};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"min_reuse", 3, "x",
             "global-load bytes requested per DRAM byte read at or above this: the data is reused "
             "(streaming ~1x)"},
            {"l1_low", 30, "%",
             "L1 hit rate below this, with reuse and no shared-memory staging, triggers (medium)"},
            {"l2_low", 60, "%", "L2 hit rate below this, with reuse, triggers (medium)"},
            {"high_reuse", 10, "x", "reuse at or above this with a missing cache: high"},
            {"staged_share", 25, "%",
             "shared-load wavefronts at or above this share of global-load sectors: tiles are "
             "staged in shared "
             "memory, a low L1 hit rate is by design"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kMemory, roofline::Bottleneck::kMixed};
  }
  int priority() const override { return 62; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double requested = m.Get(profile::kNcuGlobalLoadSectors) * kSectorBytes;
    const double dram_read = m.Get(profile::kNcuDramBytesRead);
    const double l1 = m.Get(kL1HitRate);
    const double l2 = m.Get(kL2HitRate);
    const double shared_wavefronts = m.Get(kSharedLdWavefronts);
    if (requested <= 0 || dram_read <= 0) return out;
    const double reuse = requested / dram_read;
    const double staged = 100 * shared_wavefronts / m.Get(profile::kNcuGlobalLoadSectors);
    out.observed = {{"global_load_bytes_requested", requested, "bytes"},
                    {S(profile::kNcuDramBytesRead), dram_read, "bytes"},
                    {"requested_per_dram_byte", reuse, "x"},
                    {kL1HitRate, l1, "%"},
                    {kL2HitRate, l2, "%"},
                    {"shared_load_wavefronts_per_global_sector", staged, "%"}};
    if (!ncu_tools::MemoryHeavy(m, c, {roofline::Bottleneck::kMixed})) return out;
    const double min_reuse = Threshold(c, "min_reuse");
    if (reuse < min_reuse) return out;  // streaming: nothing for a cache to hit
    const bool is_staged = staged >= Threshold(c, "staged_share");
    const bool l1_misses = l1 < Threshold(c, "l1_low") && !is_staged;
    const bool l2_misses = l2 < Threshold(c, "l2_low");
    if (!l1_misses && !l2_misses) return out;

    out.triggered = true;
    out.severity = reuse >= Threshold(c, "high_reuse") ? Severity::kHigh : Severity::kMedium;
    const std::string which = l1_misses && l2_misses ? "L1 and L2 miss"
                              : l1_misses            ? "L1 misses"
                                                     : "L2 misses";
    out.title = "Reused data is re-fetched: " + which + " it (L1 " + Pct(l1) + ", L2 " + Pct(l2) +
                " hit rate)";
    out.summary = "Global loads request " + FormatNumber(reuse) + "x the bytes read from DRAM (" +
                  FormatQuantity(requested / 1e6, "MB") + " vs " +
                  FormatQuantity(dram_read / 1e6, "MB") + "; reuse from " +
                  FormatNumber(min_reuse) + "x), so the data is reused, yet";
    if (l1_misses) {
      out.summary +=
          " L1 hits only " + Pct(l1) + " (trigger below " + Pct(Threshold(c, "l1_low")) +
          ") and the kernel barely stages data in shared memory (shared-load wavefronts are " +
          Pct(staged) + " of global-load sectors)";
    }
    if (l1_misses && l2_misses) out.summary += " and";
    if (l2_misses) {
      out.summary +=
          " L2 hits only " + Pct(l2) + " (trigger below " + Pct(Threshold(c, "l2_low")) + ")";
    }
    out.summary += ".";
    out.root_cause = l1_misses ? "Threads and blocks re-read the same global data through L1, but "
                                 "the working set of a block "
                                 "does not stay in the SM's L1 long enough (too large, evicted by "
                                 "streaming traffic, or loads "
                                 "that bypass L1), so every reuse travels to L2 and back: ~4x the "
                                 "latency of an L1 hit and a "
                                 "fraction of its bandwidth."
                               : "Blocks that read the same data run too far apart in time "
                                 "(row-major block order over a "
                                 "large matrix) or the reused set is larger than L2, so L2 evicts "
                                 "it before the next reader "
                                 "and DRAM delivers the same bytes again.";
    if (l1_misses && l2_misses) {
      out.root_cause += " L2 misses much of it too, so part of the reuse goes all the way to DRAM.";
    }
    std::vector<Recommendation> l1_recs = {
        {"Stage the reused tile in shared memory once per block (cp.async / TMA on Hopper) and "
         "compute from it, "
         "instead of every thread loading from global memory",
         "up to " + FormatNumber(reuse) +
             "x fewer global-load requests; 1.5-3x on reuse-heavy loops"},
        {"Mark read-only inputs const __restrict__ (or load with __ldg) so the compiler uses the "
         "read-only "
         "cached path (LDG.CONSTANT) and keeps them in L1",
         "1.1-1.3x"},
    };
    std::vector<Recommendation> l2_recs = {
        {"Reorder blocks for L2 locality: launch blocks that share inputs together (grouped / "
         "swizzled "
         "block order, as CUTLASS's threadblock swizzle or Triton's GROUP_M)",
         "L2 hit rate toward 80-90 %; 1.1-1.5x when DRAM-bound"},
        {"Pin a hot, reused buffer (weights, a lookup table) in L2 with a persistence window "
         "(cudaAccessPolicyWindow, hitProp = cudaAccessPropertyPersisting)",
         "1.1-1.3x when the buffer fits the set-aside L2"},
    };
    const auto& first = l1_misses ? l1_recs : l2_recs;
    const auto& second = l1_misses ? l2_recs : l1_recs;
    out.recommendations.insert(out.recommendations.end(), first.begin(), first.end());
    out.recommendations.insert(out.recommendations.end(), second.begin(), second.end());
    out.code_example =
        l1_misses ? "__shared__ float As[TILE][TILE + 1];\n"
                    "As[threadIdx.y][threadIdx.x] = A[(row0 + threadIdx.y) * K + k0 + "
                    "threadIdx.x];  // once per block\n"
                    "__syncthreads();\n"
                    "for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * "
                    "Bs[k][threadIdx.x];  // reuse on chip"
                  : "// grouped block order: GROUP_M block rows sweep the same B columns while "
                    "they are in L2\n"
                    "int pid = blockIdx.x, per_group = GROUP_M * grid_n, first_m = (pid / "
                    "per_group) * GROUP_M;\n"
                    "int rows = min(grid_m - first_m, GROUP_M);\n"
                    "int bm = first_m + (pid % per_group) % rows, bn = (pid % per_group) / rows;";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeCacheHitRatesTool() {
  return std::make_unique<CacheHitRatesTool>();
}

}  // namespace kernelpro::tools
