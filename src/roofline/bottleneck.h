// The Stage-1 bottleneck class of a kernel: what the roofline analysis (reference_analysis.h)
// concludes limits it. The micro-profiling tools (tools/) use the class to decide which of them
// run, so they depend on this header; roofline depends on no tool.
#pragma once

#include <string_view>

#include "core/status.h"

namespace kernelpro::roofline {

enum class Bottleneck { kCompute, kMemory, kLatency, kMixed };

// "compute", "memory", "latency", "mixed": stored in run databases and reports, never renamed.
std::string_view BottleneckName(Bottleneck bottleneck);
// The class named `name`; an error listing the four names for any other text.
Result<Bottleneck> ParseBottleneck(std::string_view name);
// The class `name` names, or `fallback` when it names none.
Bottleneck ParseBottleneckOr(std::string_view name, Bottleneck fallback);

inline constexpr Bottleneck kAllBottlenecks[] = {Bottleneck::kCompute, Bottleneck::kMemory,
                                                 Bottleneck::kLatency, Bottleneck::kMixed};

}  // namespace kernelpro::roofline
