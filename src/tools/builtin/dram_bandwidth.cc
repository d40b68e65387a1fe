// dram_bandwidth: a memory-bound kernel that reaches only a fraction of DRAM peak. When the busiest
// memory unit (L1/L2/DRAM, gpu__compute_memory_throughput) is itself near peak while DRAM is low,
// another level (L1 or L2, e.g. uncoalesced traffic) is the limit, and the advice here (more bytes
// in flight) would be wrong: the tool stays quiet and leaves it to global_coalescing / cache tools.
#include <algorithm>

#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;

class DramBandwidthTool : public ProfilingTool {
 public:
  std::string name() const override { return "dram_bandwidth"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Memory-bound kernel far below DRAM peak: too few bytes in flight";
  }
  std::vector<std::string> required_metrics() const override {
    return {std::string(profile::kNcuDramThroughputPct),
            std::string(profile::kNcuMemoryThroughputPct),
            std::string(profile::kNcuSmThroughputPct)};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"low_util", 60, "%",
             "DRAM throughput below this in a memory-bound kernel triggers (medium)"},
            {"very_low_util", 35, "%", "below this: high"},
            {"other_level_saturated", 80, "%",
             "busiest memory unit at or above this while DRAM is low: L1/L2 is the limit (quiet)"},
            {"attainable", 90, "%",
             "the DRAM share a well-written streaming kernel reaches (for the estimate)"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kMemory};
  }
  int priority() const override { return 68; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double dram = m.Get(profile::kNcuDramThroughputPct);
    const double mem = m.Get(profile::kNcuMemoryThroughputPct);
    out.observed = {{std::string(profile::kNcuDramThroughputPct), dram, "%"},
                    {std::string(profile::kNcuMemoryThroughputPct), mem, "%"}};
    if (!ncu_tools::MemoryHeavy(m, c)) return out;
    const double low = Threshold(c, "low_util");
    if (dram >= low) return out;
    if (mem >= Threshold(c, "other_level_saturated")) return out;  // L1/L2 bound, not DRAM
    out.triggered = true;
    out.severity = dram < Threshold(c, "very_low_util") ? Severity::kHigh : Severity::kMedium;
    const double attainable = Threshold(c, "attainable");
    out.title = "Memory-bound kernel uses only " + Pct(dram) + " of DRAM bandwidth";
    out.summary = "DRAM throughput is " + Pct(dram) + " of peak (trigger below " + Pct(low) +
                  ") and no memory level is saturated (busiest at " + Pct(mem) + ").";
    if (auto occ = m.Find(profile::kNcuAchievedOccupancyPct)) {
      out.observed.push_back({std::string(profile::kNcuAchievedOccupancyPct), *occ, "%"});
      out.summary += " Achieved occupancy is " + Pct(*occ) + ".";
    }
    out.root_cause =
        "DRAM needs many bytes in flight to reach its bandwidth (latency x bandwidth: several MB "
        "across "
        "the GPU). Too few outstanding requests (narrow loads, one element per thread, dependent "
        "loads, "
        "few resident warps or blocks) leave the memory system idle between requests.";
    out.recommendations = {
        {"Issue 128-bit loads (float4) and several independent loads per thread before using them "
         "(unroll)",
         "up to " + FormatNumber(attainable / std::max(dram, 1.0), 2) + "x (to ~" +
             Pct(attainable) + " of peak)"},
        {"Launch enough blocks to fill every SM several times over, with a grid-stride loop",
         "1.1-1.5x"},
        {c.sm_major >= 9 ? "Use bulk asynchronous copies (TMA / cp.async.bulk) or cp.async to keep "
                           "many bytes in flight"
                         : "Use cp.async to keep many bytes in flight",
         "1.2-1.5x"},
    };
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeDramBandwidthTool() {
  return std::make_unique<DramBandwidthTool>();
}

}  // namespace kernelpro::tools
