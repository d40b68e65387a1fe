#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_sync_calls_test {

using testing::MakeMetrics;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Timeline(double syncs) {
  return MakeMetrics({{"timeline.sync_calls", syncs},
                      {"timeline.sync_time_us", 12 * syncs},
                      {"timeline.end_to_end_us", 400}});
}

TEST(SyncCallsToolTest, ExtraSyncsFire) {
  auto tool = MakeSyncCallsTool();
  ToolOutput out = Check(*tool, Timeline(3));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);
  EXPECT_NE(out.summary.find("2 beyond"), std::string::npos) << out.summary;
  EXPECT_NE(out.recommendations.at(0).action.find(".item()"), std::string::npos);
}

TEST(SyncCallsToolTest, TheWorkersOwnSyncIsNotAFinding) {
  auto tool = MakeSyncCallsTool();
  EXPECT_FALSE(Check(*tool, Timeline(0)).triggered);
  EXPECT_FALSE(Check(*tool, Timeline(1)).triggered);
  EXPECT_TRUE(Check(*tool, Timeline(2)).triggered);
}

TEST(SyncCallsToolTest, SeverityByExtraSyncs) {
  auto tool = MakeSyncCallsTool();
  EXPECT_EQ(Check(*tool, Timeline(3)).severity, Severity::kMedium);
  EXPECT_EQ(Check(*tool, Timeline(4)).severity, Severity::kHigh);
}

TEST(SyncCallsToolTest, MissingMetricSkips) {
  auto tool = MakeSyncCallsTool();
  EXPECT_TRUE(Check(*tool, Without(Timeline(5), "timeline.sync_calls")).skipped);
}

TEST(SyncCallsToolTest, ThresholdOverride) {
  auto tool = MakeSyncCallsTool();
  ToolContext context;
  context.overrides["sync_calls"]["harness_syncs"] =
      0;  // e.g. a profiler that syncs nothing itself
  ToolOutput out = Check(*tool, Timeline(1), context);
  EXPECT_TRUE(out.triggered);
  EXPECT_DOUBLE_EQ(out.thresholds.at(0).value, 0);
}

TEST(SyncCallsToolTest, RecordedForwardsHaveOnlyTheWorkersSync) {
  auto tool = MakeSyncCallsTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    auto run = testing::RunOnFixture(*tool, fixture);
    EXPECT_FALSE(run.output.triggered) << fixture.name << ": " << run.output.summary;
  }
}

}  // namespace tools_builtin_sync_calls_test
}  // namespace kernelpro::tools
