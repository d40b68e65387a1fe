// occupancy_limiter: low achieved occupancy, and which limit binds it. The
// launch__occupancy_limit_* metrics give the blocks per SM each resource allows (registers, shared
// memory, warp slots, the hardware block limit); the smallest binds. A grid with fewer blocks than
// SMs is a different limiter (not enough work), and so is achieved occupancy far below the
// theoretical one (tail, imbalance). Kernels that already run a unit near peak (tuned GEMMs at one
// block per SM) are left alone.
#include <algorithm>
#include <cmath>

#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;

struct Limit {
  const char* key;
  const char* metric;
};
constexpr Limit kLimits[] = {{"registers", "launch__occupancy_limit_registers"},
                             {"shared_mem", "launch__occupancy_limit_shared_mem"},
                             {"warps", "launch__occupancy_limit_warps"},
                             {"blocks", "launch__occupancy_limit_blocks"}};

// The title, root cause and fixes for what limits occupancy: a resource (registers, shared_mem,
// warps, blocks), too few blocks (grid) or warps idle below the theoretical occupancy
// (imbalance). The grid's size and the register count extend the summary.
void ExplainLimiter(std::string_view limiter, const MetricSet& m, ToolOutput* out) {
  if (limiter == "grid") {
    auto grid = m.Find("launch__grid_size");
    auto sms = m.Find("device__attribute_multiprocessor_count");
    auto waves = m.Find("launch__waves_per_multiprocessor");
    out->title = "Too few blocks to fill the GPU";
    out->summary +=
        " The grid has " +
        (grid ? FormatNumber(*grid) + " block(s) for " + FormatNumber(sms.value_or(0)) + " SMs"
              : FormatNumber(*waves, 2) + " waves") +
        ".";
    out->root_cause =
        "The launch does not provide enough blocks: most SMs have nothing to run, whatever the "
        "per-block resources.";
    out->recommendations = {
        {"Give each block less work so the grid has at least one block per SM (ideally several "
         "waves)",
         "up to SMs/blocks x on this kernel"},
        {"Split the reduction dimension (split-K) or the batch across more blocks", "1.5-4x"},
        {"If the problem is inherently tiny, fuse this kernel with its neighbours",
         "saves the launch"},
    };
  } else if (limiter == "imbalance") {
    out->title = "Achieved occupancy far below theoretical";
    out->root_cause =
        "Resources allow many more warps than are active on average: blocks finish unevenly, the "
        "last "
        "wave is partial, or warps exit early.";
    out->recommendations = {
        {"Balance work per block (grid-stride loops, uniform tiles) and size the grid to whole "
         "waves",
         "1.1-1.5x"},
        {"Avoid early-exiting warps inside a block; keep all warps busy until the end", "1.1-1.3x"},
    };
  } else if (limiter == "registers") {
    out->title = "Occupancy is limited by registers per thread";
    out->summary += m.Has(profile::kNcuRegistersPerThread)
                        ? " Each thread uses " +
                              FormatQuantity(m.Get(profile::kNcuRegistersPerThread), "registers") +
                              "."
                        : std::string();
    out->root_cause =
        "The register file (64K per SM) fits only a few blocks at this register count.";
    out->recommendations = {
        {"Add __launch_bounds__(threads, min_blocks) or -maxrregcount to trade registers for "
         "resident blocks",
         "1.1-1.5x if latency-bound"},
        {"Reduce live values: smaller per-thread tiles, less unrolling, recompute cheap values",
         "1.1-1.3x"},
    };
  } else if (limiter == "shared_mem") {
    out->title = "Occupancy is limited by shared memory per block";
    out->root_cause =
        "Each block's shared-memory allocation leaves room for only a few blocks per SM.";
    out->recommendations = {
        {"Shrink the shared-memory tile or the number of pipeline stages; reuse buffers",
         "1.1-1.5x"},
        {"Opt in to the larger carve-out (cudaFuncAttributePreferredSharedMemoryCarveout / "
         "MaxDynamicSharedMemorySize) if the L1 share is not needed",
         "1.1-1.3x"},
    };
  } else if (limiter == "warps") {
    out->title = "Occupancy is limited by the block size";
    out->root_cause =
        "Large blocks fill the SM's warp slots in few blocks; a partially filled SM cannot take "
        "another block.";
    out->recommendations = {
        {"Use a block size that divides the SM's warp slots evenly (128 or 256 threads)",
         "1.1-1.3x"},
    };
  } else {
    out->title = "Occupancy is limited by the blocks-per-SM hardware limit";
    out->root_cause =
        "Blocks are so small that the per-SM block limit is reached before the warp slots are "
        "full.";
    out->recommendations = {
        {"Use larger blocks (at least 128 threads) so the block limit does not cap resident "
         "warps",
         "1.2-2x"},
    };
  }
}

class OccupancyLimiterTool : public ProfilingTool {
 public:
  std::string name() const override { return "occupancy_limiter"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Low achieved occupancy and the resource (registers, shared memory, block size, grid) "
           "that limits it";
  }
  std::vector<std::string> required_metrics() const override {
    std::vector<std::string> names{std::string(profile::kNcuAchievedOccupancyPct)};
    for (const Limit& l : kLimits) names.emplace_back(l.metric);
    return names;
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"low", 50, "%", "achieved occupancy below this: medium finding"},
            {"very_low", 25, "%", "achieved occupancy below this: high finding"},
            {"saturated", 80, "%",
             "SM or memory throughput at or above this: occupancy is not the problem"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kLatency, roofline::Bottleneck::kMemory,
            roofline::Bottleneck::kMixed, roofline::Bottleneck::kCompute};
  }
  int priority() const override { return 65; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double occ = m.Get(profile::kNcuAchievedOccupancyPct);
    out.observed.push_back({std::string(profile::kNcuAchievedOccupancyPct), occ, "%"});
    for (const Limit& l : kLimits) out.observed.push_back({l.metric, m.Get(l.metric), "blocks/SM"});
    const double low = Threshold(c, "low");
    if (occ >= low) return out;
    const double saturated = Threshold(c, "saturated");
    for (std::string_view n : {profile::kNcuSmThroughputPct, profile::kNcuMemoryThroughputPct}) {
      if (auto v = m.Find(n); v && *v >= saturated) return out;  // a unit is already at its peak
    }
    out.triggered = true;
    out.severity = occ < Threshold(c, "very_low") ? Severity::kHigh : Severity::kMedium;

    const Limit* binding = &kLimits[0];
    for (const Limit& l : kLimits) {
      if (m.Get(l.metric) < m.Get(binding->metric))
        binding = &l;  // ties keep the earlier (registers first)
    }
    const double blocks = m.Get(binding->metric);
    std::string limiter = binding->key;
    std::optional<double> theoretical;
    if (auto bs = m.Find("launch__block_size")) {
      double warps_per_block = std::ceil(*bs / 32);
      double max_warps = c.sm_major == 8 || c.sm_major == 9 || c.sm_major == 0 ? 64 : 48;
      if (auto mw = m.Find("device__attribute_max_warps_per_multiprocessor")) max_warps = *mw;
      theoretical = std::min(100.0, 100 * blocks * warps_per_block / max_warps);
    }
    // Too few blocks for the GPU: resources are not what limits.
    auto grid = m.Find("launch__grid_size");
    auto sms = m.Find("device__attribute_multiprocessor_count");
    auto waves = m.Find("launch__waves_per_multiprocessor");
    if ((grid && sms && *grid < *sms) || (!grid && waves && *waves < 1)) limiter = "grid";
    if (limiter == "grid" && out.severity == Severity::kHigh) out.severity = Severity::kMedium;

    std::string numbers = "Achieved occupancy is " + Pct(occ) + " (medium below " + Pct(low) +
                          ", high below " + Pct(Threshold(c, "very_low")) + ").";
    if (theoretical) {
      out.observed.push_back({"theoretical_occupancy", *theoretical, "%"});
      numbers += " The tightest limit, " + std::string(binding->key) + ", allows " +
                 FormatNumber(blocks) + " block(s) per SM: " + Pct(*theoretical) +
                 " theoretical occupancy.";
      if (limiter != "grid" && *theoretical >= 2 * occ && *theoretical >= low)
        limiter = "imbalance";
    } else {
      numbers += " The tightest limit, " + std::string(binding->key) + ", allows " +
                 FormatNumber(blocks) + " block(s) per SM.";
    }
    out.summary = numbers;
    ExplainLimiter(limiter, m, &out);
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeOccupancyLimiterTool() {
  return std::make_unique<OccupancyLimiterTool>();
}

}  // namespace kernelpro::tools
