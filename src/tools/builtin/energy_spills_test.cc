#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_energy_spills_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Local(double sectors, double long_scoreboard = 5, double lg = 1) {
  return MakeMetrics(
      {{"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", sectors},
       {"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", sectors},
       {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", long_scoreboard},
       {"smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", lg}});
}

TEST(EnergySpillsToolTest, HiddenSpillTrafficFires) {
  auto tool = MakeEnergySpillsTool();
  ToolOutput out =
      Check(*tool, With(With(Local(50000), "sass.local_store", 6), "sass.local_load", 6));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_NE(out.summary.find("6 STL"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("8 uJ"), std::string::npos) << out.summary;  // 100000 * 80 pJ
}

TEST(EnergySpillsToolTest, NoTrafficOrVisibleStallsStayQuiet) {
  auto tool = MakeEnergySpillsTool();
  EXPECT_FALSE(Check(*tool, Local(0)).triggered);
  EXPECT_FALSE(Check(*tool, Local(100, 15)).triggered);  // at the threshold: not hidden
  EXPECT_TRUE(Check(*tool, Local(100, 14.9)).triggered);
  EXPECT_FALSE(Check(*tool, Local(100, 5, 10)).triggered);
}

TEST(EnergySpillsToolTest, MissingMetricSkips) {
  auto tool = MakeEnergySpillsTool();
  EXPECT_TRUE(
      Check(*tool, Without(Local(100), "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum")).skipped);
}

TEST(EnergySpillsToolTest, ThresholdOverride) {
  auto tool = MakeEnergySpillsTool();
  ToolContext context;
  context.overrides["energy_spills"]["min_sectors"] = 1000;
  EXPECT_FALSE(Check(*tool, Local(100), context).triggered);
}

TEST(EnergySpillsToolTest, RecordedKernelsStayQuiet) {
  auto tool = MakeEnergySpillsTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    EXPECT_FALSE(testing::RunOnFixture(*tool, fixture).output.triggered) << fixture.name;
  }
}

}  // namespace tools_builtin_energy_spills_test
}  // namespace kernelpro::tools
