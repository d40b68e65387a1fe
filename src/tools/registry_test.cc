#include "tools/registry.h"

#include <gtest/gtest.h>

#include "tools/render.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_registry_test {

// A tool that triggers when "x" exceeds its threshold, with a configurable source and affinity.
class FakeTool : public ProfilingTool {
 public:
  FakeTool(std::string name, ToolSource source, std::vector<roofline::Bottleneck> affinity,
           int priority, Severity severity)
      : name_(std::move(name)),
        source_(source),
        affinity_(std::move(affinity)),
        priority_(priority),
        severity_(severity) {}
  std::string name() const override { return name_; }
  ToolSource source() const override { return source_; }
  std::string description() const override { return "fires when x is large"; }
  std::vector<std::string> required_metrics() const override { return {"timeline.end_to_end_us"}; }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"limit", 10, "us", "too slow"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override { return affinity_; }
  int priority() const override { return priority_; }
  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    out.triggered = m.Get("timeline.end_to_end_us") > Threshold(c, "limit");
    out.severity = severity_;
    out.title = name_ + " fired";
    out.recommendations = {{"do less", "2x"}};
    return out;
  }

 private:
  std::string name_;
  ToolSource source_;
  std::vector<roofline::Bottleneck> affinity_;
  int priority_;
  Severity severity_;
};

profile::Metrics Timeline(double end_to_end_us) {
  profile::Metrics m;
  m.timeline = profile::TimelineSummary{};
  m.timeline->end_to_end_us = end_to_end_us;
  return m;
}

ToolRegistry FakeRegistry() {
  ToolRegistry r;
  r.Add(std::make_unique<FakeTool>("memory_low", ToolSource::kNcu,
                                   std::vector{roofline::Bottleneck::kMemory}, 10, Severity::kLow));
  r.Add(std::make_unique<FakeTool>("compute_high", ToolSource::kNcu,
                                   std::vector{roofline::Bottleneck::kCompute}, 10,
                                   Severity::kHigh));
  r.Add(std::make_unique<FakeTool>(
      "any_high_p90", ToolSource::kTimeline,
      std::vector<roofline::Bottleneck>(std::begin(roofline::kAllBottlenecks),
                                        std::end(roofline::kAllBottlenecks)),
      90, Severity::kHigh));
  r.Add(std::make_unique<FakeTool>("energy_critical", ToolSource::kEnergy,
                                   std::vector<roofline::Bottleneck>{}, 99, Severity::kCritical));
  return r;
}

std::vector<std::string> Names(const std::vector<ToolOutput>& outs) {
  std::vector<std::string> names;
  for (const ToolOutput& o : outs) names.push_back(o.tool);
  return names;
}

TEST(RegistryTest, DuplicateNamesAreRefused) {
  ToolRegistry r = FakeRegistry();
  Status s = r.Add(std::make_unique<FakeTool>(
      "memory_low", ToolSource::kNcu, std::vector<roofline::Bottleneck>{}, 1, Severity::kLow));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(r.tools().size(), 4u);
}

TEST(RegistryTest, TheClassFiltersSpeedToolsButNotEnergyTools) {
  ToolRegistry r = FakeRegistry();
  AnalysisOptions memory;
  memory.bottleneck = roofline::Bottleneck::kMemory;
  Analysis a = r.Analyze(Timeline(50), memory);
  EXPECT_EQ(Names(a.findings),
            (std::vector<std::string>{"any_high_p90", "memory_low", "energy_critical"}));
  EXPECT_EQ(a.filtered, std::vector<std::string>{"compute_high"});
  // Energy findings are capped below speed findings, whatever the tool said.
  EXPECT_EQ(a.findings.back().severity, Severity::kLow);
  // Without a class every speed tool runs; high before low, higher priority first.
  Analysis all = r.Analyze(Timeline(50), {});
  EXPECT_EQ(Names(all.findings), (std::vector<std::string>{"any_high_p90", "compute_high",
                                                           "memory_low", "energy_critical"}));
  AnalysisOptions no_energy;
  no_energy.energy = false;
  EXPECT_EQ(r.Analyze(Timeline(50), no_energy).findings.size(), 3u);
}

TEST(RegistryTest, MissingMetricsSkipTheToolAndSaySo) {
  ToolRegistry r = FakeRegistry();
  Analysis a = r.Analyze(profile::Metrics{}, {});
  EXPECT_TRUE(a.findings.empty());
  ASSERT_EQ(a.skipped.size(), 4u);
  EXPECT_EQ(a.skipped[0].skip_reason, "missing 1 required metric(s): timeline.end_to_end_us");
  Json j = ToJson(a);
  EXPECT_EQ(j["skipped"][0]["reason"], "missing 1 required metric(s): timeline.end_to_end_us");
}

TEST(RegistryTest, ThresholdOverridesChangeTheTriggerAndTheReport) {
  ToolRegistry r = FakeRegistry();
  AnalysisOptions options;
  options.overrides["any_high_p90"]["limit"] = 100;
  Analysis a = r.Analyze(Timeline(50), options);
  EXPECT_EQ(std::count(a.quiet.begin(), a.quiet.end(), "any_high_p90"), 1);
  options.overrides["any_high_p90"]["limit"] = 20;
  a = r.Analyze(Timeline(50), options);
  ASSERT_EQ(a.findings[0].tool, "any_high_p90");
  EXPECT_DOUBLE_EQ(a.findings[0].thresholds.at(0).value, 20);
}

// The search analyses through the registry it is given, with no options of its own: thresholds
// set on the registry reach every analysis, and a per-call override still wins.
TEST(RegistryTest, ThresholdsSetOnTheRegistryApplyToEveryAnalysis) {
  ToolRegistry r = FakeRegistry();
  r.SetThresholdOverrides({{"any_high_p90", {{"limit", 100}}}});
  Analysis a = r.Analyze(Timeline(50), AnalysisOptions{});
  EXPECT_EQ(std::count(a.quiet.begin(), a.quiet.end(), "any_high_p90"), 1);
  // Another tool keeps its default (10 us) and fires.
  const std::vector<std::string> fired = Names(a.findings);
  EXPECT_EQ(std::count(fired.begin(), fired.end(), "memory_low"), 1);
  AnalysisOptions options;
  options.overrides["any_high_p90"]["limit"] = 20;
  a = r.Analyze(Timeline(50), options);
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings[0].tool, "any_high_p90");
  EXPECT_DOUBLE_EQ(a.findings[0].thresholds.at(0).value, 20);
}

TEST(RegistryTest, MakeToolContextReadsTheArchitecture) {
  profile::Metrics m;
  m.sass = profile::SassView{};
  m.sass->arch = "sm_90a";
  MetricSet set;
  EXPECT_EQ(MakeToolContext(m, set, {}).sm_major, 9);
  m.sass->arch = "sm_100a";
  EXPECT_EQ(MakeToolContext(m, set, {}).sm_major, 10);
  m.sass->arch = "sm_80";
  EXPECT_EQ(MakeToolContext(m, set, {}).sm_major, 8);
  profile::Metrics no_sass;
  set.Set("device__attribute_compute_capability_major", 9);
  EXPECT_EQ(MakeToolContext(no_sass, set, {}).sm_major, 9);
}

TEST(RenderTest, BoundedAndDeterministic) {
  ToolRegistry r = FakeRegistry();
  AnalysisOptions options;
  options.bottleneck = roofline::Bottleneck::kMemory;
  Analysis a = r.Analyze(Timeline(50), options);
  std::string text = RenderGuidance(a);
  EXPECT_EQ(text, RenderGuidance(r.Analyze(Timeline(50), options)));
  EXPECT_EQ(text.rfind("## Automated Bottleneck Analysis\n", 0), 0u);
  EXPECT_NE(text.find("Stage-1 class: memory-bound. 2 finding(s): 1 high, 1 low."),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("any_high_p90"), text.find("memory_low"));
  EXPECT_NE(text.find("## Energy Efficiency Notes"), std::string::npos);
  EXPECT_LT(text.find("memory_low"), text.find("## Energy Efficiency Notes"));
  RenderOptions tight;
  tight.max_chars = 400;
  std::string short_text = RenderGuidance(a, tight);
  EXPECT_LE(short_text.size(), 400u);
  EXPECT_NE(short_text.find("omitted for length"), std::string::npos) << short_text;
}

}  // namespace tools_registry_test
}  // namespace kernelpro::tools
