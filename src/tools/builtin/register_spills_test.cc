#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_register_spills_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

// Spills present, no harmful case: balanced, register limit not binding, busy scheduler.
MetricSet Harmless() {
  return MakeMetrics({{"sass.local_store", 4},
                      {"sass.local_load", 4},
                      {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", 10},
                      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 55},
                      {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 55},
                      {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 10},
                      {"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 10},
                      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 900},
                      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 80},
                      {"launch__occupancy_limit_registers", 4},
                      {"launch__occupancy_limit_shared_mem", 2},
                      {"launch__occupancy_limit_warps", 8},
                      {"launch__occupancy_limit_blocks", 32},
                      {"smsp__issue_active.avg.pct_of_peak_sustained_active", 60},
                      {"smsp__warps_eligible.avg.per_cycle_active", 1.5},
                      {"launch__registers_per_thread", 168}});
}

MetricSet CaseA(double long_scoreboard = 20) {
  MetricSet m = With(Harmless(), "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
                     long_scoreboard);
  m = With(m, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 30);
  return With(m, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 30);
}
MetricSet CaseB(double local_sectors = 500) {
  MetricSet m =
      With(Harmless(), "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 70);
  m = With(m, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", local_sectors);
  return m;
}
MetricSet CaseC(double issue = 20) {
  MetricSet m =
      With(Harmless(), "launch__occupancy_limit_registers", 2);  // ties with shared: binds
  return With(m, "smsp__issue_active.avg.pct_of_peak_sustained_active", issue);
}

TEST(RegisterSpillsToolTest, HarmlessSpillsStayQuiet) {
  auto tool = MakeRegisterSpillsTool();
  EXPECT_FALSE(Check(*tool, Harmless()).triggered);
  // No spills at all: nothing to report whatever the counters say.
  MetricSet none = With(With(CaseA(), "sass.local_store", 0), "sass.local_load", 0);
  EXPECT_FALSE(Check(*tool, none).triggered);
}

TEST(RegisterSpillsToolTest, CaseALatencyBound) {
  auto tool = MakeRegisterSpillsTool();
  ToolOutput out = Check(*tool, CaseA());
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.title.find("case A"), std::string::npos) << out.title;
  EXPECT_NE(out.summary.find("168 registers"), std::string::npos) << out.summary;
  EXPECT_FALSE(Check(*tool, CaseA(15)).triggered);  // strictly above 15 %
  EXPECT_TRUE(Check(*tool, CaseA(15.1)).triggered);
}

TEST(RegisterSpillsToolTest, CaseBSpillTrafficIsCritical) {
  auto tool = MakeRegisterSpillsTool();
  ToolOutput out = Check(*tool, CaseB());
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kCritical);
  EXPECT_NE(out.title.find("case B"), std::string::npos);
  // local / (local + global) around 30 %: global = 980, local = x + 10 (420 local is 30 %).
  EXPECT_FALSE(Check(*tool, CaseB(400)).triggered);  // 410 / 1390 = 29.5 %
  EXPECT_TRUE(Check(*tool, CaseB(420)).triggered);   // 430 / 1410 = 30.5 %
}

TEST(RegisterSpillsToolTest, CaseCOccupancy) {
  auto tool = MakeRegisterSpillsTool();
  ToolOutput out = Check(*tool, CaseC());
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.title.find("case C"), std::string::npos);
  EXPECT_FALSE(Check(*tool, CaseC(30)).triggered);
  EXPECT_TRUE(
      Check(*tool, With(CaseC(30), "smsp__warps_eligible.avg.per_cycle_active", 0.5)).triggered);
  // Registers not the tightest limit: no case C.
  EXPECT_FALSE(Check(*tool, With(CaseC(), "launch__occupancy_limit_registers", 3)).triggered);
}

TEST(RegisterSpillsToolTest, MissingMetricSkips) {
  auto tool = MakeRegisterSpillsTool();
  EXPECT_TRUE(Check(*tool, Without(CaseA(), "sass.local_load")).skipped);
  EXPECT_TRUE(Check(*tool, Without(CaseA(), "launch__occupancy_limit_blocks")).skipped);
}

TEST(RegisterSpillsToolTest, ThresholdOverride) {
  auto tool = MakeRegisterSpillsTool();
  ToolContext context;
  context.overrides["register_spills"]["long_scoreboard"] = 25;
  EXPECT_FALSE(Check(*tool, CaseA(20), context).triggered);
}

TEST(RegisterSpillsToolTest, RecordedKernelsDoNotSpill) {
  auto tool = MakeRegisterSpillsTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    EXPECT_FALSE(testing::RunOnFixture(*tool, fixture).output.triggered) << fixture.name;
  }
}

}  // namespace tools_builtin_register_spills_test
}  // namespace kernelpro::tools
