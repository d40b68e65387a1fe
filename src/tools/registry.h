// The tool registry: which micro-profiling tools exist, which of them run for a kernel, and the
// findings they produce.
//
// Orchestration is proactive (paper §3.2.3): every tool relevant to the Stage-1 class runs, every
// time, in a fixed order; the LLM never chooses. Relevance is each tool's bottleneck affinity
// (ProfilingTool::bottlenecks); with no class known, every speed tool runs. Energy tools bypass
// the filter and are capped at low severity so they never outrank a speed finding.
//
// Built-in tools are listed in one plain function (BuiltinTools, builtin/builtin.cc); users add
// tools without rebuilding kernelpro through plugin libraries (plugin.h) and TOML rule files
// (rule_tool.h). A registry is filled once and then only read: Analyze is safe to call from
// several threads.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/tool.h"

namespace kernelpro::tools {

struct AnalysisOptions {
  std::optional<roofline::Bottleneck> bottleneck;  // Stage-1 class; unset runs every speed tool
  bool energy = true;                              // run the energy-only tools
  ThresholdOverrides overrides;                    // tool -> threshold -> value
  std::optional<ProblemWork> work;                 // Stage 1's bytes and FLOPs; unset: unknown
};

// Everything one analysis produced, in the registry's order.
struct Analysis {
  std::optional<roofline::Bottleneck> bottleneck;
  std::vector<ToolOutput> findings;   // triggered, sorted: severity, then priority, then name
  std::vector<ToolOutput> skipped;    // required metrics missing (skip_reason says which)
  std::vector<std::string> quiet;     // ran and did not trigger
  std::vector<std::string> filtered;  // not relevant to the class (did not run)
};

Json ToJson(const Analysis& analysis);

class ToolRegistry {
 public:
  // Fails (and adds nothing) when a tool of that name is already registered.
  Status Add(std::unique_ptr<ProfilingTool> tool);
  const std::vector<std::unique_ptr<ProfilingTool>>& tools() const { return tools_; }
  const ProfilingTool* Find(std::string_view name) const;

  // Whether `tool` runs for `bottleneck` (unset: every non-energy tool runs).
  static bool Runs(const ProfilingTool& tool,
                   const std::optional<roofline::Bottleneck>& bottleneck);

  // Thresholds every Analyze applies unless AnalysisOptions::overrides sets the same one: how a
  // front end configures a run's tools once (--threshold), for every analysis made with this
  // registry, the search's and the profiling agent's included.
  void SetThresholdOverrides(ThresholdOverrides overrides) { overrides_ = std::move(overrides); }
  const ThresholdOverrides& threshold_overrides() const { return overrides_; }

  Analysis Analyze(const profile::Metrics& metrics, const AnalysisOptions& options) const;

 private:
  std::vector<std::unique_ptr<ProfilingTool>> tools_;
  ThresholdOverrides overrides_;
};

// Runs one tool as the registry does: a ToolOutput with skipped=true (and which metrics) when a
// required metric is missing, else the tool's own output with tool, source and priority filled in.
ToolOutput RunTool(const ProfilingTool& tool, const MetricSet& metrics, const ToolContext& context);

// The context Analyze gives tools: arch and sm_major from the SASS view (else from ncu's device
// attributes), the metrics record, the class, the overrides and Stage 1's work.
ToolContext MakeToolContext(const profile::Metrics& metrics, const MetricSet& set,
                            const AnalysisOptions& options);

// The built-in tools, in a fixed order (builtin/builtin.cc).
std::vector<std::unique_ptr<ProfilingTool>> BuiltinTools();

// A registry holding the built-in tools.
ToolRegistry BuiltinRegistry();

}  // namespace kernelpro::tools
