// Small helpers shared by the ncu-counter tools (header only, internal to src/tools/builtin).
//
// The helpers only read metrics a tool either declared as required or tests with Has() here, so
// a tool never runs on invented defaults.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/ncu_catalog.h"
#include "tools/tool.h"

namespace kernelpro::tools::ncu_tools {

inline std::string S(std::string_view name) { return std::string(name); }

// A metric's value when present.
inline std::optional<double> Opt(const MetricSet& m, std::string_view name) { return m.Find(name); }

// Whether the kernel is memory-heavy: the Stage-1 class says memory (or one of `also`), or, with no
// class known, the memory side of the roofline leads the compute side and is at least `floor` %
// busy (a 2 us kernel at 1 % of every peak is latency/launch-bound, not memory-bound).
inline bool MemoryHeavy(const MetricSet& m, const ToolContext& c,
                        std::vector<roofline::Bottleneck> also = {}, double floor = 40) {
  if (c.bottleneck) {
    if (*c.bottleneck == roofline::Bottleneck::kMemory) return true;
    return std::find(also.begin(), also.end(), *c.bottleneck) != also.end();
  }
  auto mem = m.Find(profile::kNcuMemoryThroughputPct);
  auto sm = m.Find(profile::kNcuSmThroughputPct);
  if (!mem || !sm) return false;
  return *mem > *sm && *mem >= floor;
}

// Whether the kernel is compute-heavy: class compute or mixed, or (no class) SM throughput leads.
inline bool ComputeHeavy(const MetricSet& m, const ToolContext& c) {
  if (c.bottleneck)
    return *c.bottleneck == roofline::Bottleneck::kCompute ||
           *c.bottleneck == roofline::Bottleneck::kMixed;
  auto mem = m.Find(profile::kNcuMemoryThroughputPct);
  auto sm = m.Find(profile::kNcuSmThroughputPct);
  if (!mem || !sm) return false;
  return *sm > *mem;
}

inline std::string Pct(double value) { return FormatQuantity(value, "%"); }

// "the Stage-1 class" wording for summaries.
inline std::string ClassWord(const ToolContext& c) {
  if (!c.bottleneck) return "unclassified";
  return std::string(roofline::BottleneckName(*c.bottleneck)) + "-bound";
}

inline std::vector<roofline::Bottleneck> AllClasses() {
  return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
}

}  // namespace kernelpro::tools::ncu_tools
