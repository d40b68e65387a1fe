#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_launch_overhead_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Timeline(double share, double kernels = 50) {
  const double e2e = 1000;
  return MakeMetrics({{"timeline.launch_overhead_share", share},
                      {"timeline.kernel_count", kernels},
                      {"timeline.avg_launch_latency_us", 6},
                      {"timeline.end_to_end_us", e2e},
                      {"timeline.gpu_busy_us", e2e * (1 - share)}});
}

TEST(LaunchOverheadToolTest, FiresAboveHighWithSpeedupBound) {
  auto tool = MakeLaunchOverheadTool();
  EXPECT_EQ(tool->name(), "launch_overhead");
  EXPECT_EQ(tool->source(), ToolSource::kTimeline);
  ToolOutput out = Check(*tool, Timeline(0.3));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.summary.find("1.43x"), std::string::npos) << out.summary;
  EXPECT_NE(out.title.find("30 %"), std::string::npos) << out.title;
  ASSERT_EQ(out.recommendations.size(), 3u);
  EXPECT_NE(out.recommendations[0].action.find("CUDA Graph"), std::string::npos);
  EXPECT_FALSE(out.code_example.empty());
}

TEST(LaunchOverheadToolTest, QuietBelowAndAtHigh) {
  auto tool = MakeLaunchOverheadTool();
  EXPECT_FALSE(Check(*tool, Timeline(0.1)).triggered);
  EXPECT_FALSE(Check(*tool, Timeline(0.2)).triggered);  // strictly above the threshold
  EXPECT_TRUE(Check(*tool, Timeline(0.2001)).triggered);
}

TEST(LaunchOverheadToolTest, SeverityCriticalAboveForty) {
  auto tool = MakeLaunchOverheadTool();
  EXPECT_EQ(Check(*tool, Timeline(0.4)).severity, Severity::kHigh);
  EXPECT_EQ(Check(*tool, Timeline(0.41)).severity, Severity::kCritical);
}

TEST(LaunchOverheadToolTest, OneLaunchIsNotOverheadToRemove) {
  auto tool = MakeLaunchOverheadTool();
  EXPECT_FALSE(Check(*tool, Timeline(0.74, 1)).triggered);
  EXPECT_TRUE(Check(*tool, Timeline(0.74, 2)).triggered);
}

TEST(LaunchOverheadToolTest, MissingMetricSkips) {
  auto tool = MakeLaunchOverheadTool();
  ToolOutput out = Check(*tool, Without(Timeline(0.5), "timeline.launch_overhead_share"));
  EXPECT_TRUE(out.skipped);
  EXPECT_FALSE(out.triggered);
}

TEST(LaunchOverheadToolTest, ThresholdOverride) {
  auto tool = MakeLaunchOverheadTool();
  ToolContext context;
  context.overrides["launch_overhead"]["high"] = 50;
  EXPECT_FALSE(Check(*tool, Timeline(0.45), context).triggered);
  context.overrides["launch_overhead"]["min_kernels"] = 1;
  context.overrides["launch_overhead"]["high"] = 10;
  ToolOutput out = Check(*tool, Timeline(0.15, 1), context);
  EXPECT_TRUE(out.triggered);
  EXPECT_DOUBLE_EQ(out.thresholds.at(0).value, 10);
}

TEST(LaunchOverheadToolTest, DeterministicOutput) {
  auto tool = MakeLaunchOverheadTool();
  EXPECT_EQ(ToJson(Check(*tool, Timeline(0.55))).dump(),
            ToJson(Check(*tool, Timeline(0.55))).dump());
}

TEST(LaunchOverheadToolTest, RecordedManyLaunchesFires) {
  auto tool = MakeLaunchOverheadTool();
  auto run = testing::RunOnFixture(*tool, {"h200", "p_many_launches"});
  ASSERT_FALSE(run.output.skipped) << run.output.skip_reason;
  EXPECT_TRUE(run.output.triggered) << run.output.summary;
}

TEST(LaunchOverheadToolTest, RecordedSingleForwardsStayQuiet) {
  auto tool = MakeLaunchOverheadTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    if (fixture.name == "p_many_launches") continue;
    auto run = testing::RunOnFixture(*tool, fixture);
    EXPECT_FALSE(run.output.triggered) << fixture.name << ": " << run.output.summary;
  }
}

}  // namespace tools_builtin_launch_overhead_test
}  // namespace kernelpro::tools
