#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_energy_bank_conflicts_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Shared(double conflicts, double short_scoreboard = 2, double mio = 1) {
  return MakeMetrics(
      {{"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", conflicts},
       {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 0},
       {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 800},
       {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 200},
       {"smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct", short_scoreboard},
       {"smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct", mio}});
}

TEST(EnergyBankConflictsToolTest, HiddenConflictsFire) {
  auto tool = MakeEnergyBankConflictsTool();
  EXPECT_EQ(tool->source(), ToolSource::kEnergy);
  ToolOutput out = Check(*tool, Shared(400));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_NE(out.title.find("40 %"), std::string::npos) << out.title;
}

TEST(EnergyBankConflictsToolTest, VisibleOrAbsentConflictsStayQuiet) {
  auto tool = MakeEnergyBankConflictsTool();
  EXPECT_FALSE(Check(*tool, Shared(0)).triggered);
  EXPECT_FALSE(Check(*tool, Shared(400, 25)).triggered);     // stalls: a speed problem
  EXPECT_FALSE(Check(*tool, Shared(400, 2, 10)).triggered);  // at the threshold is not low
  EXPECT_TRUE(Check(*tool, Shared(400, 2, 9.9)).triggered);
}

TEST(EnergyBankConflictsToolTest, ConflictShareBoundary) {
  auto tool = MakeEnergyBankConflictsTool();
  EXPECT_FALSE(Check(*tool, Shared(100)).triggered);  // 10 % exactly
  EXPECT_TRUE(Check(*tool, Shared(101)).triggered);
}

TEST(EnergyBankConflictsToolTest, MissingMetricSkips) {
  auto tool = MakeEnergyBankConflictsTool();
  EXPECT_TRUE(Check(*tool, Without(Shared(400),
                                   "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct"))
                  .skipped);
}

TEST(EnergyBankConflictsToolTest, ThresholdOverride) {
  auto tool = MakeEnergyBankConflictsTool();
  ToolContext context;
  context.overrides["energy_bank_conflicts"]["conflict_share"] = 50;
  EXPECT_FALSE(Check(*tool, Shared(400), context).triggered);
}

TEST(EnergyBankConflictsToolTest, RecordedKernels) {
  auto tool = MakeEnergyBankConflictsTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    // linear_gelu transposes into xs[k][r] with a 132-float pitch: 4-way conflicts on the stores.
    EXPECT_EQ(testing::RunOnFixture(*tool, fixture).output.triggered, fixture.name == "linear_gelu")
        << fixture.name;
  }
}

}  // namespace tools_builtin_energy_bank_conflicts_test
}  // namespace kernelpro::tools
