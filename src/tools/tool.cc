#include "tools/tool.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "core/enum_names.h"

namespace kernelpro::tools {
namespace {

constexpr std::array<std::pair<Severity, const char*>, 4> kSeverityNames = {
    {{Severity::kCritical, "critical"},
     {Severity::kHigh, "high"},
     {Severity::kMedium, "medium"},
     {Severity::kLow, "low"}}};
constexpr std::array<std::pair<ToolSource, const char*>, 4> kSourceNames = {
    {{ToolSource::kNcu, "ncu"},
     {ToolSource::kTimeline, "timeline"},
     {ToolSource::kSass, "sass"},
     {ToolSource::kEnergy, "energy"}}};

// The value named `name`, or an error that lists the names there are.
template <typename E, std::size_t N>
Result<E> ParseName(std::string_view name, const std::array<std::pair<E, const char*>, N>& names,
                    std::string_view what) {
  if (std::optional<E> value = ValueOf(names, name)) return *value;
  return Status::InvalidArgument("unknown " + std::string(what) + " '" + std::string(name) +
                                 "' (expected one of: " + NameList(names) + ")");
}

}  // namespace

std::string_view SeverityName(Severity severity) { return NameOf(kSeverityNames, severity); }
Result<Severity> ParseSeverity(std::string_view name) {
  return ParseName(name, kSeverityNames, "severity");
}
std::string_view ToolSourceName(ToolSource source) { return NameOf(kSourceNames, source); }
Result<ToolSource> ParseToolSource(std::string_view name) {
  return ParseName(name, kSourceNames, "tool source");
}

void MetricSet::Set(std::string name, double value, std::string unit) {
  if (!unit.empty()) units_[name] = std::move(unit);
  values_[std::move(name)] = value;
}

bool MetricSet::Has(std::string_view name) const { return values_.find(name) != values_.end(); }

double MetricSet::Get(std::string_view name) const { return Find(name).value_or(0.0); }

std::optional<double> MetricSet::Find(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string MetricSet::Unit(std::string_view name) const {
  auto it = units_.find(name);
  return it == units_.end() ? std::string() : it->second;
}

Json ToJson(const ToolOutput& o) {
  Json observed = Json::array();
  for (const ObservedMetric& m : o.observed) {
    observed.push_back({{"name", m.name}, {"value", m.value}, {"unit", m.unit}});
  }
  Json thresholds = Json::array();
  for (const AppliedThreshold& t : o.thresholds) {
    thresholds.push_back({{"name", t.name}, {"value", t.value}, {"unit", t.unit}});
  }
  Json recommendations = Json::array();
  for (const Recommendation& r : o.recommendations) {
    recommendations.push_back(
        {{"action", r.action}, {"expected_improvement", r.expected_improvement}});
  }
  Json j = {{"tool", o.tool},
            {"source", ToolSourceName(o.source)},
            {"triggered", o.triggered},
            {"severity", SeverityName(o.severity)},
            {"priority", o.priority},
            {"title", o.title},
            {"summary", o.summary},
            {"observed", observed},
            {"thresholds", thresholds},
            {"root_cause", o.root_cause},
            {"recommendations", recommendations},
            {"code_example", o.code_example}};
  if (o.skipped) {
    j["skipped"] = true;
    j["skip_reason"] = o.skip_reason;
  }
  return j;
}

double ProfilingTool::Threshold(const ToolContext& context, std::string_view name) const {
  if (auto tool = context.overrides.find(this->name()); tool != context.overrides.end()) {
    if (auto it = tool->second.find(std::string(name)); it != tool->second.end()) return it->second;
  }
  for (const ThresholdSpec& spec : thresholds()) {
    if (spec.name == name) return spec.value;
  }
  return std::nan("");  // a tool asking for a threshold it never declared: shows as "nan"
}

ToolOutput ProfilingTool::NewOutput(const ToolContext& context) const {
  ToolOutput out;
  out.tool = name();
  out.source = source();
  out.priority = priority();
  for (const ThresholdSpec& spec : thresholds()) {
    out.thresholds.push_back({spec.name, Threshold(context, spec.name), spec.unit});
  }
  return out;
}

std::vector<std::string> MissingMetrics(const ProfilingTool& tool, const MetricSet& metrics) {
  std::vector<std::string> missing;
  for (const std::string& name : tool.required_metrics()) {
    if (!metrics.Has(name)) missing.push_back(name);
  }
  return missing;
}

std::string FormatNumber(double value, int digits) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  char buffer[64];
  const double magnitude = std::floor(std::log10(std::abs(value)));
  if (std::abs(value) >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.*e", std::max(digits - 1, 0), value);
    return buffer;
  }
  // Fixed notation with enough decimals for `digits` significant digits.
  int decimals = std::max(0, digits - 1 - static_cast<int>(magnitude));
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

std::string FormatQuantity(double value, std::string_view unit, int digits) {
  std::string text = FormatNumber(value, digits);
  if (unit.empty()) return text;
  return text + " " + std::string(unit);
}

}  // namespace kernelpro::tools
