#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_idle_gaps_test {

using testing::MakeMetrics;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Gaps(double gap_time, double kernels = 4, double e2e = 100) {
  return MakeMetrics({{"timeline.gap_count", 2},
                      {"timeline.gap_time_us", gap_time},
                      {"timeline.largest_gap_us", gap_time / 2},
                      {"timeline.end_to_end_us", e2e},
                      {"timeline.kernel_count", kernels}});
}

TEST(IdleGapsToolTest, LargeGapsFire) {
  auto tool = MakeIdleGapsTool();
  ToolOutput out = Check(*tool, Gaps(40));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.title.find("40 %"), std::string::npos) << out.title;
}

TEST(IdleGapsToolTest, BoundariesAndSeverity) {
  auto tool = MakeIdleGapsTool();
  EXPECT_FALSE(Check(*tool, Gaps(10)).triggered);  // must exceed 10 %
  ToolOutput medium = Check(*tool, Gaps(10.5));
  EXPECT_TRUE(medium.triggered);
  EXPECT_EQ(medium.severity, Severity::kMedium);
  EXPECT_EQ(Check(*tool, Gaps(30)).severity, Severity::kMedium);
  EXPECT_EQ(Check(*tool, Gaps(31)).severity, Severity::kHigh);
}

TEST(IdleGapsToolTest, OneLaunchHasNoGapBetweenLaunches) {
  auto tool = MakeIdleGapsTool();
  EXPECT_FALSE(Check(*tool, Gaps(70, 1)).triggered);
}

TEST(IdleGapsToolTest, TheFirstLaunchLatencyIsLeftOutWithTheRecord) {
  auto tool = MakeIdleGapsTool();
  profile::Metrics record;
  record.timeline = profile::TimelineSummary{};
  record.timeline->gaps = {{0, 30}, {50, 8}};  // the leading gap is the first launch's latency
  ToolContext context;
  context.metrics = &record;
  EXPECT_FALSE(Check(*tool, Gaps(38), context).triggered);  // 8 % between launches
  record.timeline->gaps = {{0, 30}, {50, 25}};
  ToolOutput out = Check(*tool, Gaps(55), context);
  EXPECT_TRUE(out.triggered);
  EXPECT_NE(out.summary.find("first launch"), std::string::npos) << out.summary;
}

TEST(IdleGapsToolTest, MissingMetricSkips) {
  auto tool = MakeIdleGapsTool();
  EXPECT_TRUE(Check(*tool, Without(Gaps(40), "timeline.gap_time_us")).skipped);
}

TEST(IdleGapsToolTest, ThresholdOverride) {
  auto tool = MakeIdleGapsTool();
  ToolContext context;
  context.overrides["idle_gaps"]["medium_share"] = 50;
  EXPECT_FALSE(Check(*tool, Gaps(40), context).triggered);
  context.overrides["idle_gaps"]["medium_share"] = 5;
  EXPECT_TRUE(Check(*tool, Gaps(6), context).triggered);
}

TEST(IdleGapsToolTest, RecordedSingleForwardsStayQuiet) {
  auto tool = MakeIdleGapsTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    auto run = testing::RunOnFixture(*tool, fixture);
    if (fixture.name == "p_many_launches") continue;  // judged by the sweep test
    EXPECT_FALSE(run.output.triggered) << fixture.name << ": " << run.output.summary;
  }
}

}  // namespace tools_builtin_idle_gaps_test
}  // namespace kernelpro::tools
