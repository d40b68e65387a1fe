#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_register_pressure_test {

MetricSet Regs(double regs, double limit_regs = 2) {
  return testing::MakeMetrics({{"launch__registers_per_thread", regs},
                               {"launch__occupancy_limit_registers", limit_regs},
                               {"launch__occupancy_limit_shared_mem", 3},
                               {"launch__occupancy_limit_warps", 8},
                               {"launch__occupancy_limit_blocks", 32},
                               {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 40}});
}

TEST(RegisterPressureToolTest, TriggersAndNamesTheOccupancyLimit) {
  auto tool = MakeRegisterPressureTool();
  ToolOutput out = testing::Run(*tool, Regs(118));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);
  EXPECT_NE(out.summary.find("118 registers"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("2 block(s) per SM, the tightest"), std::string::npos) << out.summary;
  EXPECT_NE(out.recommendations[0].action.find("__launch_bounds__"), std::string::npos);
  EXPECT_FALSE(testing::Run(*tool, Regs(64, 8)).triggered);
}

TEST(RegisterPressureToolTest, BoundariesAndSeverity) {
  auto tool = MakeRegisterPressureTool();
  EXPECT_FALSE(testing::Run(*tool, Regs(95)).triggered);
  EXPECT_EQ(testing::Run(*tool, Regs(96)).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Regs(127)).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Regs(128)).severity, Severity::kHigh);
  // Registers not the binding limit (shared memory allows 3, registers 4): low.
  ToolOutput low = testing::Run(*tool, Regs(128, 4));
  EXPECT_EQ(low.severity, Severity::kLow);
  EXPECT_NE(low.summary.find("another limit is tighter"), std::string::npos);
}

TEST(RegisterPressureToolTest, AGridTooSmallToFillTheRegisterLimitIsNotHeldBackByRegisters) {
  auto tool = MakeRegisterPressureTool();
  auto with_grid = [&](double grid) {
    return testing::With(testing::With(Regs(112), "launch__grid_size", grid),
                         "device__attribute_multiprocessor_count", 132);
  };
  // 32 blocks on 132 SMs: at most one block per SM, the register limit (2) never binds.
  ToolOutput small = testing::Run(*tool, with_grid(32));
  ASSERT_TRUE(small.triggered);
  EXPECT_EQ(small.severity, Severity::kLow);
  EXPECT_NE(small.summary.find("registers do not limit occupancy now"), std::string::npos)
      << small.summary;
  EXPECT_EQ(small.title.find("limit occupancy"), std::string::npos) << small.title;
  // Boundary: 264 blocks = 2 per SM reaches the limit; 265 needs a third slot on some SM.
  EXPECT_EQ(testing::Run(*tool, with_grid(264)).severity, Severity::kLow);
  EXPECT_EQ(testing::Run(*tool, with_grid(265)).severity, Severity::kMedium);
}

TEST(RegisterPressureToolTest, QuietWhenAUnitIsSaturated) {
  auto tool = MakeRegisterPressureTool();
  EXPECT_FALSE(
      testing::Run(*tool, testing::With(Regs(168, 1),
                                        "sm__throughput.avg.pct_of_peak_sustained_elapsed", 93))
          .triggered);
}

TEST(RegisterPressureToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeRegisterPressureTool();
  EXPECT_TRUE(
      testing::Run(*tool, testing::Without(Regs(128), "launch__registers_per_thread")).skipped);
  ToolContext c;
  c.overrides["register_pressure"]["warning"] = 64;
  EXPECT_TRUE(testing::Run(*tool, Regs(80), c).triggered);
  EXPECT_FALSE(testing::Run(*tool, Regs(80)).triggered);
}

TEST(RegisterPressureToolTest, Fixtures) {
  auto tool = MakeRegisterPressureTool();
  auto gelu =
      testing::LoadFixture("h200-profile/profiles", "linear_gelu");  // 118 regs, limit 2 blocks
  ToolOutput g = RunTool(*tool, gelu.set, gelu.Context());
  ASSERT_TRUE(g.triggered);
  EXPECT_EQ(g.severity, Severity::kMedium);
  EXPECT_NE(g.summary.find("the tightest"), std::string::npos) << g.summary;
  // cuBLAS bf16: 168 registers at 93 % SM throughput, deliberate.
  auto cublas = testing::LoadFixture("h200", "p_cublas_bf16");
  EXPECT_FALSE(RunTool(*tool, cublas.set, cublas.Context()).triggered);
  auto naive = testing::LoadFixture("h200", "k_naive_matmul");  // 32 registers
  EXPECT_FALSE(RunTool(*tool, naive.set, naive.Context()).triggered);
}

}  // namespace tools_builtin_register_pressure_test
}  // namespace kernelpro::tools
