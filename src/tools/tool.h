// Micro-profiling tools: expert heuristics that turn a Metrics record into plain-language
// findings (paper §3.2.3, appendix B).
//
// A ProfilingTool reads a flat MetricSet (named numbers from the ncu, SASS and timeline views),
// triggers on one bottleneck signature, and returns a ToolOutput: severity, what was observed
// against which thresholds, the root cause, and ranked recommendations with expected gains.
// Tools are pure functions of their inputs (the same metrics give the same output, byte for
// byte) and hold no mutable state, so one instance may serve several threads.
//
// Lifecycle, as the registry drives it (registry.h):
//
//   Stage-1 class --filter--> tools whose affinity includes the class (energy tools bypass it)
//        |                        |
//        |                 required metrics present? --no--> ToolOutput{skipped, reason}
//        v                        | yes
//   ToolContext ------------> Analyze(metrics, context) --> ToolOutput{triggered?, ...}
//
// A tool never runs on invented defaults: the registry checks required_metrics() before
// Analyze, and Analyze may only read the metrics it declared (or test others with Has()).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "profile/metrics.h"
#include "roofline/bottleneck.h"

namespace kernelpro::tools {

// Ordered from most to least urgent: sorting by the enum value puts critical findings first.
enum class Severity { kCritical = 0, kHigh = 1, kMedium = 2, kLow = 3 };
std::string_view SeverityName(Severity severity);  // "critical", "high", "medium", "low"
Result<Severity> ParseSeverity(std::string_view name);

// Which view a tool reads. Energy tools read ncu/SASS counters too, but form their own partition:
// they bypass the Stage-1 filter and their severity stays below every speed finding.
enum class ToolSource { kNcu, kTimeline, kSass, kEnergy };
std::string_view ToolSourceName(ToolSource source);  // "ncu", "timeline", "sass", "energy"
Result<ToolSource> ParseToolSource(std::string_view name);

// Named numbers a tool can read. Names are ncu metric names as collected
// ("sm__throughput.avg.pct_of_peak_sustained_elapsed", duration-weighted over the candidate's
// kernels), "sass.*" (instruction counts over the candidate's entry kernels) and "timeline.*"
// (the system view); see metric_set.h for the full list.
class MetricSet {
 public:
  void Set(std::string name, double value, std::string unit = "");
  bool Has(std::string_view name) const;
  // The value of a metric the tool declared as required; 0 when absent (the registry never calls
  // a tool whose required metrics are missing, so this only matters for optional ones: test them
  // with Has() first).
  double Get(std::string_view name) const;
  std::optional<double> Find(std::string_view name) const;
  std::string Unit(std::string_view name) const;
  const std::map<std::string, double, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, double, std::less<>> values_;
  std::map<std::string, std::string, std::less<>> units_;
};

struct ThresholdSpec {
  std::string name;         // "high", "critical", "low_util"...: unique within the tool
  double value = 0;         // the default, from the paper or DESIGN.md §6 where it gives one
  std::string unit;         // "%", "registers", "us", ""
  std::string description;  // what crossing it means, for `kernelpro tools list`
};

struct ObservedMetric {
  std::string name;  // the metric's name in the MetricSet, or a derived quantity's
  double value = 0;
  std::string unit;
};

struct AppliedThreshold {
  std::string name;
  double value = 0;  // after config overrides
  std::string unit;
};

struct Recommendation {
  std::string action;                // what to change in the kernel, imperative
  std::string expected_improvement;  // "1.5-2x on this kernel", "up to 1/(1-p) = 1.6x"
};

struct ToolOutput {
  std::string tool;
  ToolSource source = ToolSource::kNcu;
  bool triggered = false;
  bool skipped = false;  // required metrics missing: never analysed
  std::string skip_reason;
  Severity severity = Severity::kLow;
  int priority = 0;     // the tool's priority, copied for ordering
  std::string title;    // one line: "Register spills slow this latency-bound kernel"
  std::string summary;  // one or two sentences with the key numbers
  std::vector<ObservedMetric> observed;
  std::vector<AppliedThreshold> thresholds;
  std::string root_cause;
  std::vector<Recommendation> recommendations;  // ranked, best first
  std::string code_example;                     // optional: a short CUDA snippet showing the fix
};

Json ToJson(const ToolOutput& output);

// Per-tool threshold overrides: tool name -> threshold name -> value (from config or the CLI).
using ThresholdOverrides = std::map<std::string, std::map<std::string, double>, std::less<>>;

// What the problem needs, from Stage 1 (roofline::ReferenceAnalysis; tools/work_check.h builds
// it): the yardstick a candidate's counters are checked against (verified_work).
struct ProblemWork {
  double min_input_bytes = 0;  // inputs + parameters, each read once (0: unknown)
  double flops = 0;            // analytic FLOPs, counted + estimated
  double flops_estimated = 0;  // the part of `flops` that is a per-element estimate
};

// What a tool may know besides the metrics.
struct ToolContext {
  std::optional<roofline::Bottleneck> bottleneck;  // Stage-1 class; unset when unknown
  std::string arch;                                // "sm_90a" (SASS view) or "" when unknown
  int sm_major = 0;                                // 9 for Hopper; 0 when unknown
  const profile::Metrics* metrics =
      nullptr;  // the full record, for per-kernel detail (may be null)
  ThresholdOverrides overrides;
  std::optional<ProblemWork> work;  // Stage 1's yardstick; unset without Stage 1
};

class ProfilingTool {
 public:
  virtual ~ProfilingTool() = default;

  virtual std::string name() const = 0;  // snake_case, unique in a registry
  virtual ToolSource source() const = 0;
  virtual std::string description() const = 0;  // one line: the bottleneck it looks for
  virtual std::vector<std::string> required_metrics() const = 0;
  virtual std::vector<ThresholdSpec> thresholds() const = 0;
  // The Stage-1 classes this tool runs for (its bottleneck affinity). Ignored for energy tools.
  virtual std::vector<roofline::Bottleneck> bottlenecks() const = 0;
  // Orders findings of equal severity: higher first. The paper's register tool has 70.
  virtual int priority() const = 0;

  // Called only when every required metric is present. Returns triggered=false (with the tool
  // name filled in) when the signature is absent.
  virtual ToolOutput Analyze(const MetricSet& metrics, const ToolContext& context) const = 0;

 protected:
  // The threshold `name` after the context's overrides; the declared default otherwise.
  double Threshold(const ToolContext& context, std::string_view name) const;
  // A ToolOutput with tool, source, priority and the applied thresholds filled in.
  ToolOutput NewOutput(const ToolContext& context) const;
};

// The required metrics missing from `metrics`, in declaration order.
std::vector<std::string> MissingMetrics(const ProfilingTool& tool, const MetricSet& metrics);

// Number formatting shared by tools and the renderer, so text is byte-for-byte stable: at most
// `digits` significant digits, no exponent below 1e9, no trailing zeros ("12.5", "0.031", "3").
std::string FormatNumber(double value, int digits = 3);
// "42.1 %", "96 registers", "1.2 us": value plus unit with the conventions above.
std::string FormatQuantity(double value, std::string_view unit, int digits = 3);

}  // namespace kernelpro::tools
