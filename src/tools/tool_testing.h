// Helpers for the tools' tests: metric sets from literals and a one-call way to run a tool the
// way the registry does (so a test of missing metrics sees exactly what a user would).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "tools/registry.h"
#include "tools/tool.h"

namespace kernelpro::tools::testing {

inline MetricSet MakeMetrics(std::initializer_list<std::pair<std::string, double>> values) {
  MetricSet set;
  for (const auto& [name, value] : values) set.Set(name, value);
  return set;
}

// A copy of `base` with `name` set to `value` (or removed when `remove` is true).
inline MetricSet With(const MetricSet& base, const std::string& name, double value) {
  MetricSet set = base;
  set.Set(name, value);
  return set;
}
inline MetricSet Without(const MetricSet& base, const std::string& name) {
  MetricSet set;
  for (const auto& [n, v] : base.values()) {
    if (n != name) set.Set(n, v, base.Unit(n));
  }
  return set;
}

inline ToolContext ContextFor(std::optional<roofline::Bottleneck> bottleneck, int sm_major = 9) {
  ToolContext context;
  context.bottleneck = bottleneck;
  context.sm_major = sm_major;
  context.arch = sm_major == 9 ? "sm_90a" : "sm_" + std::to_string(sm_major) + "0";
  return context;
}

inline ToolOutput Run(const ProfilingTool& tool, const MetricSet& metrics,
                      const ToolContext& context = {}) {
  return RunTool(tool, metrics, context);
}

}  // namespace kernelpro::tools::testing
