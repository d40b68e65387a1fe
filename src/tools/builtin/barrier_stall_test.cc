#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_barrier_stall_test {

const std::string kBarrier = "smsp__warp_issue_stalled_barrier_per_warp_active.pct";

MetricSet Barrier(double v) {
  return testing::MakeMetrics({{kBarrier, v}, {"launch__block_size", 256}});
}

TEST(BarrierStallToolTest, TriggersAboveThirtyPercent) {
  auto tool = MakeBarrierStallTool();
  ToolOutput out = testing::Run(*tool, Barrier(35));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.summary.find("35 %"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("256 threads"), std::string::npos) << out.summary;
  EXPECT_NE(out.code_example.find("__shfl_down_sync"), std::string::npos);
  EXPECT_FALSE(testing::Run(*tool, Barrier(10)).triggered);
}

TEST(BarrierStallToolTest, BoundariesAndSeverity) {
  auto tool = MakeBarrierStallTool();
  EXPECT_FALSE(testing::Run(*tool, Barrier(30)).triggered);
  EXPECT_TRUE(testing::Run(*tool, Barrier(30.1)).triggered);
  EXPECT_EQ(testing::Run(*tool, Barrier(49.9)).severity, Severity::kHigh);
  EXPECT_EQ(testing::Run(*tool, Barrier(50)).severity, Severity::kCritical);
}

TEST(BarrierStallToolTest, MissingMetricSkips) {
  EXPECT_TRUE(
      testing::Run(*MakeBarrierStallTool(), testing::MakeMetrics({{"launch__block_size", 256}}))
          .skipped);
}

TEST(BarrierStallToolTest, OverrideChangesTrigger) {
  auto tool = MakeBarrierStallTool();
  ToolContext c;
  c.overrides["barrier_stall"]["high"] = 20;
  EXPECT_TRUE(testing::Run(*tool, Barrier(22), c).triggered);
  EXPECT_FALSE(testing::Run(*tool, Barrier(22)).triggered);
}

TEST(BarrierStallToolTest, FixturesStayQuiet) {
  // cp.async copy: 22 % barrier stalls, below the 30 % line; cuBLAS 11 %.
  auto tool = MakeBarrierStallTool();
  for (auto [dir, name] : {std::pair{"h200-profile/record", "cp_async_copy"},
                           {"h200", "p_cublas_bf16"},
                           {"h200-profile/profiles", "scaled_softmax"}}) {
    auto f = testing::LoadFixture(dir, name);
    ToolOutput out = RunTool(*tool, f.set, f.Context());
    EXPECT_FALSE(out.skipped) << name;
    EXPECT_FALSE(out.triggered) << name;
  }
}

}  // namespace tools_builtin_barrier_stall_test
}  // namespace kernelpro::tools
