#include "tools/registry.h"

#include <algorithm>
#include <cctype>

#include "tools/metric_set.h"

namespace kernelpro::tools {

Status ToolRegistry::Add(std::unique_ptr<ProfilingTool> tool) {
  if (!tool) return Status::InvalidArgument("no tool to register");
  if (Find(tool->name()) != nullptr) {
    return Status::InvalidArgument("a tool named '" + tool->name() + "' is already registered");
  }
  tools_.push_back(std::move(tool));
  return Status::Ok();
}

const ProfilingTool* ToolRegistry::Find(std::string_view name) const {
  for (const auto& tool : tools_) {
    if (tool->name() == name) return tool.get();
  }
  return nullptr;
}

bool ToolRegistry::Runs(const ProfilingTool& tool,
                        const std::optional<roofline::Bottleneck>& bottleneck) {
  if (tool.source() == ToolSource::kEnergy || !bottleneck) return true;
  std::vector<roofline::Bottleneck> affinity = tool.bottlenecks();
  return std::find(affinity.begin(), affinity.end(), *bottleneck) != affinity.end();
}

ToolOutput RunTool(const ProfilingTool& tool, const MetricSet& metrics,
                   const ToolContext& context) {
  ToolOutput out;
  if (std::vector<std::string> missing = MissingMetrics(tool, metrics); !missing.empty()) {
    out.skipped = true;
    out.skip_reason = "missing " + std::to_string(missing.size()) + " required metric(s): ";
    for (std::size_t i = 0; i < missing.size() && i < 3; ++i)
      out.skip_reason += (i ? ", " : "") + missing[i];
    if (missing.size() > 3) out.skip_reason += ", ...";
  } else {
    out = tool.Analyze(metrics, context);
  }
  out.tool = tool.name();
  out.source = tool.source();
  out.priority = tool.priority();
  return out;
}

ToolContext MakeToolContext(const profile::Metrics& metrics, const MetricSet& set,
                            const AnalysisOptions& options) {
  ToolContext context;
  context.bottleneck = options.bottleneck;
  context.metrics = &metrics;
  context.overrides = options.overrides;
  context.work = options.work;
  if (metrics.sass) {
    context.arch = metrics.sass->arch;
    if (context.arch.starts_with("sm_") && context.arch.size() >= 5) {
      // "sm_90a" -> 9, "sm_100a" -> 10, "sm_80" -> 8: the number without its last digit.
      std::string digits;
      for (char c : context.arch.substr(3)) {
        if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
      }
      if (digits.size() >= 2) context.sm_major = std::stoi(digits.substr(0, digits.size() - 1));
    }
  }
  if (context.sm_major == 0) {
    if (auto major = set.Find("device__attribute_compute_capability_major")) {
      context.sm_major = static_cast<int>(*major);
    }
  }
  return context;
}

Analysis ToolRegistry::Analyze(const profile::Metrics& metrics,
                               const AnalysisOptions& options) const {
  Analysis analysis;
  analysis.bottleneck = options.bottleneck;
  MetricSet set = BuildMetricSet(metrics);
  AnalysisOptions merged = options;
  for (const auto& [tool, values] : overrides_) {
    for (const auto& [name, value] : values) merged.overrides[tool].try_emplace(name, value);
  }
  ToolContext context = MakeToolContext(metrics, set, merged);
  for (const auto& tool : tools_) {
    if (tool->source() == ToolSource::kEnergy && !options.energy) continue;
    if (!Runs(*tool, options.bottleneck)) {
      analysis.filtered.push_back(tool->name());
      continue;
    }
    ToolOutput out = RunTool(*tool, set, context);
    if (out.skipped) {
      analysis.skipped.push_back(std::move(out));
      continue;
    }
    if (!out.triggered) {
      analysis.quiet.push_back(tool->name());
      continue;
    }
    // Energy findings stay below every speed finding (lexicographic priority of speed).
    if (tool->source() == ToolSource::kEnergy) out.severity = Severity::kLow;
    analysis.findings.push_back(std::move(out));
  }
  std::stable_sort(analysis.findings.begin(), analysis.findings.end(),
                   [](const ToolOutput& a, const ToolOutput& b) {
                     bool a_energy = a.source == ToolSource::kEnergy;
                     bool b_energy = b.source == ToolSource::kEnergy;
                     if (a_energy != b_energy) return b_energy;
                     if (a.severity != b.severity) return a.severity < b.severity;
                     if (a.priority != b.priority) return a.priority > b.priority;
                     return a.tool < b.tool;
                   });
  return analysis;
}

Json ToJson(const Analysis& analysis) {
  Json findings = Json::array(), skipped = Json::array();
  for (const ToolOutput& o : analysis.findings) findings.push_back(ToJson(o));
  for (const ToolOutput& o : analysis.skipped) {
    skipped.push_back(
        {{"tool", o.tool}, {"source", ToolSourceName(o.source)}, {"reason", o.skip_reason}});
  }
  return {{"bottleneck",
           analysis.bottleneck ? Json(roofline::BottleneckName(*analysis.bottleneck)) : Json()},
          {"findings", findings},
          {"skipped", skipped},
          {"quiet", analysis.quiet},
          {"filtered", analysis.filtered}};
}

ToolRegistry BuiltinRegistry() {
  ToolRegistry registry;
  for (auto& tool : BuiltinTools()) registry.Add(std::move(tool));
  return registry;
}

}  // namespace kernelpro::tools
