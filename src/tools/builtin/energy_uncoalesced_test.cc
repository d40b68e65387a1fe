#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_energy_uncoalesced_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

// Scalar 32-bit accesses in the SASS: the ideal is 4 sectors per request.
MetricSet Loads(double sectors_per_request, double long_scoreboard = 5) {
  return MakeMetrics(
      {{"sass.global_load_32", 1},
       {"sass.global_store_32", 1},
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1000 * sectors_per_request},
       {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1000},
       {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", long_scoreboard}});
}

TEST(EnergyUncoalescedToolTest, HiddenUncoalescedLoadsFire) {
  auto tool = MakeEnergyUncoalescedTool();
  ToolOutput out = Check(*tool, Loads(16));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_NE(out.title.find("12000 excess sectors"), std::string::npos) << out.title;
}

TEST(EnergyUncoalescedToolTest, BoundariesAndStalls) {
  auto tool = MakeEnergyUncoalescedTool();
  EXPECT_FALSE(Check(*tool, Loads(8)).triggered);  // exactly twice the ideal of 4
  EXPECT_TRUE(Check(*tool, Loads(8.1)).triggered);
  EXPECT_FALSE(Check(*tool, Loads(16, 15)).triggered);  // the stall shows: a speed problem
}

TEST(EnergyUncoalescedToolTest, VectorLoadsHaveAHigherIdeal) {
  auto tool = MakeEnergyUncoalescedTool();
  // float4 loads: 16 sectors per request is perfectly coalesced.
  MetricSet vec = With(Loads(16), "sass.global_load_128", 2);
  EXPECT_FALSE(Check(*tool, vec).triggered);
  // Without SASS the widths are unknown: assume float4 and flag only beyond twice 16.
  MetricSet no_sass = Without(Without(Loads(32), "sass.global_load_32"), "sass.global_store_32");
  EXPECT_FALSE(Check(*tool, no_sass).triggered);
  EXPECT_TRUE(Check(*tool, With(no_sass, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 33000))
                  .triggered);
}

TEST(EnergyUncoalescedToolTest, HiddenStridedStoresFire) {
  auto tool = MakeEnergyUncoalescedTool();
  MetricSet m = With(Loads(4), "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 32000);
  m = With(m, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 1000);
  m = With(m, "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", 2);
  ToolOutput out = Check(*tool, m);
  ASSERT_TRUE(out.triggered);
  EXPECT_NE(out.summary.find("stores fetch 32 sectors"), std::string::npos) << out.summary;
}

TEST(EnergyUncoalescedToolTest, MissingMetricSkips) {
  auto tool = MakeEnergyUncoalescedTool();
  EXPECT_TRUE(
      Check(*tool, Without(Loads(16), "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")).skipped);
}

TEST(EnergyUncoalescedToolTest, ThresholdOverride) {
  auto tool = MakeEnergyUncoalescedTool();
  ToolContext context;
  context.overrides["energy_uncoalesced"]["excess_factor"] = 5;
  EXPECT_FALSE(Check(*tool, Loads(16), context).triggered);
}

TEST(EnergyUncoalescedToolTest, RecordedStridedCopyFires) {
  auto tool = MakeEnergyUncoalescedTool();
  auto run = testing::RunOnFixture(*tool, {"h200", "k_strided_copy"});
  ASSERT_FALSE(run.output.skipped) << run.output.skip_reason;
  EXPECT_TRUE(run.output.triggered) << run.output.summary;
}

}  // namespace tools_builtin_energy_uncoalesced_test
}  // namespace kernelpro::tools
