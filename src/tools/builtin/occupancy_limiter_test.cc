#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_occupancy_limiter_test {

MetricSet Occ(double occ, double regs_limit = 2, double smem_limit = 3) {
  return testing::MakeMetrics({{"sm__warps_active.avg.pct_of_peak_sustained_active", occ},
                               {"launch__occupancy_limit_registers", regs_limit},
                               {"launch__occupancy_limit_shared_mem", smem_limit},
                               {"launch__occupancy_limit_warps", 8},
                               {"launch__occupancy_limit_blocks", 32},
                               {"launch__block_size", 256},
                               {"launch__registers_per_thread", 118},
                               {"launch__grid_size", 2048},
                               {"device__attribute_multiprocessor_count", 132}});
}

TEST(OccupancyLimiterToolTest, NamesTheBindingLimit) {
  auto tool = MakeOccupancyLimiterTool();
  ToolOutput out = testing::Run(*tool, Occ(24));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.title.find("registers"), std::string::npos) << out.title;
  EXPECT_NE(out.summary.find("registers, allows 2 block(s) per SM: 25 % theoretical"),
            std::string::npos)
      << out.summary;
  ToolOutput smem = testing::Run(*tool, Occ(24, 4, 2));
  EXPECT_NE(smem.title.find("shared memory"), std::string::npos) << smem.title;
  EXPECT_FALSE(testing::Run(*tool, Occ(80)).triggered);
}

TEST(OccupancyLimiterToolTest, BoundariesAndSeverity) {
  auto tool = MakeOccupancyLimiterTool();
  EXPECT_FALSE(testing::Run(*tool, Occ(50)).triggered);
  EXPECT_EQ(testing::Run(*tool, Occ(49.9)).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Occ(25)).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Occ(24.9)).severity, Severity::kHigh);
}

TEST(OccupancyLimiterToolTest, SmallGridAndSaturatedKernels) {
  auto tool = MakeOccupancyLimiterTool();
  ToolOutput grid = testing::Run(*tool, testing::With(Occ(12), "launch__grid_size", 32));
  ASSERT_TRUE(grid.triggered);
  EXPECT_NE(grid.title.find("Too few blocks"), std::string::npos);
  EXPECT_NE(grid.summary.find("32 block(s) for 132 SMs"), std::string::npos) << grid.summary;
  EXPECT_FALSE(
      testing::Run(*tool,
                   testing::With(Occ(12), "sm__throughput.avg.pct_of_peak_sustained_elapsed", 90))
          .triggered);
}

TEST(OccupancyLimiterToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeOccupancyLimiterTool();
  EXPECT_TRUE(
      testing::Run(*tool, testing::Without(Occ(20), "launch__occupancy_limit_shared_mem")).skipped);
  ToolContext c;
  c.overrides["occupancy_limiter"]["low"] = 20;
  c.overrides["occupancy_limiter"]["very_low"] = 10;
  EXPECT_FALSE(testing::Run(*tool, Occ(24), c).triggered);
}

TEST(OccupancyLimiterToolTest, Fixtures) {
  auto tool = MakeOccupancyLimiterTool();
  auto gelu = testing::LoadFixture("h200-profile/profiles", "linear_gelu");
  ToolOutput g = RunTool(*tool, gelu.set, gelu.Context());
  ASSERT_TRUE(g.triggered);
  EXPECT_NE(g.title.find("registers"), std::string::npos) << g.title;
  auto mlp = testing::LoadFixture("h200-profile/profiles", "tiny_mlp");  // 32 blocks on 132 SMs
  ToolOutput t = RunTool(*tool, mlp.set, mlp.Context());
  ASSERT_TRUE(t.triggered);
  EXPECT_NE(t.title.find("Too few blocks"), std::string::npos) << t.title;
  // cuBLAS runs one 384-thread block per SM on purpose, at 93 % SM throughput.
  auto cublas = testing::LoadFixture("h200", "p_cublas_bf16");
  EXPECT_FALSE(RunTool(*tool, cublas.set, cublas.Context()).triggered);
  auto naive = testing::LoadFixture("h200", "k_naive_matmul");  // 98 % occupancy
  EXPECT_FALSE(RunTool(*tool, naive.set, naive.Context()).triggered);
}

}  // namespace tools_builtin_occupancy_limiter_test
}  // namespace kernelpro::tools
