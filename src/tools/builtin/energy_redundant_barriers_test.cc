#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_energy_redundant_barriers_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Barriers(double barriers, double stall = 1, double kernels = 1) {
  return MakeMetrics({{"sass.barrier", barriers},
                      {"sass.instructions", 400},
                      {"sass.kernels", kernels},
                      {"smsp__warp_issue_stalled_barrier_per_warp_active.pct", stall}});
}

TEST(EnergyRedundantBarriersToolTest, ManyHiddenBarriersFire) {
  auto tool = MakeEnergyRedundantBarriersTool();
  ToolOutput out = Check(*tool, Barriers(12));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_NE(out.summary.find("30 per 1000"), std::string::npos) << out.summary;
}

TEST(EnergyRedundantBarriersToolTest, BoundariesAndStalls) {
  auto tool = MakeEnergyRedundantBarriersTool();
  EXPECT_FALSE(Check(*tool, Barriers(7)).triggered);
  EXPECT_TRUE(Check(*tool, Barriers(8)).triggered);
  EXPECT_FALSE(Check(*tool, Barriers(8, 5)).triggered);      // warps wait: a speed problem
  EXPECT_FALSE(Check(*tool, Barriers(16, 1, 4)).triggered);  // 4 per kernel over 4 kernels
}

TEST(EnergyRedundantBarriersToolTest, MissingMetricSkips) {
  auto tool = MakeEnergyRedundantBarriersTool();
  EXPECT_TRUE(
      Check(*tool, Without(Barriers(12), "smsp__warp_issue_stalled_barrier_per_warp_active.pct"))
          .skipped);
}

TEST(EnergyRedundantBarriersToolTest, ThresholdOverride) {
  auto tool = MakeEnergyRedundantBarriersTool();
  ToolContext context;
  context.overrides["energy_redundant_barriers"]["min_barriers_per_kernel"] = 2;
  EXPECT_TRUE(Check(*tool, Barriers(2), context).triggered);
}

TEST(EnergyRedundantBarriersToolTest, RecordedKernelsStayQuiet) {
  auto tool = MakeEnergyRedundantBarriersTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    EXPECT_FALSE(testing::RunOnFixture(*tool, fixture).output.triggered) << fixture.name;
  }
}

}  // namespace tools_builtin_energy_redundant_barriers_test
}  // namespace kernelpro::tools
