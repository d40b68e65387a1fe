#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_dram_bandwidth_test {

MetricSet Dram(double dram, double mem = -1) {
  return testing::MakeMetrics(
      {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", dram},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", mem < 0 ? dram : mem},
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 20}});
}

TEST(DramBandwidthToolTest, TriggersBelowSixtyPercent) {
  auto tool = MakeDramBandwidthTool();
  auto c = testing::ContextFor(roofline::Bottleneck::kMemory);
  ToolOutput out = testing::Run(*tool, Dram(44), c);
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);
  EXPECT_NE(out.title.find("44 %"), std::string::npos) << out.title;
  EXPECT_FALSE(testing::Run(*tool, Dram(84), c).triggered);
  EXPECT_FALSE(testing::Run(*tool, Dram(11, 85), c).triggered);  // L1/L2 saturated instead
}

TEST(DramBandwidthToolTest, BoundariesAndSeverity) {
  auto tool = MakeDramBandwidthTool();
  auto c = testing::ContextFor(roofline::Bottleneck::kMemory);
  EXPECT_FALSE(testing::Run(*tool, Dram(60), c).triggered);
  EXPECT_EQ(testing::Run(*tool, Dram(59.9), c).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Dram(35), c).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Dram(34.9), c).severity, Severity::kHigh);
  EXPECT_FALSE(
      testing::Run(*tool, Dram(44), testing::ContextFor(roofline::Bottleneck::kLatency)).triggered);
}

TEST(DramBandwidthToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeDramBandwidthTool();
  EXPECT_TRUE(
      testing::Run(*tool,
                   testing::Without(Dram(44), "dram__throughput.avg.pct_of_peak_sustained_elapsed"))
          .skipped);
  ToolContext c = testing::ContextFor(roofline::Bottleneck::kMemory);
  c.overrides["dram_bandwidth"]["low_util"] = 40;
  EXPECT_FALSE(testing::Run(*tool, Dram(44), c).triggered);
}

TEST(DramBandwidthToolTest, Fixtures) {
  auto tool = MakeDramBandwidthTool();
  auto scalar = testing::LoadFixture("h200", "k_swish_scalar");
  EXPECT_TRUE(RunTool(*tool, scalar.set, scalar.Context(roofline::Bottleneck::kMemory)).triggered);
  // Transpose: DRAM at 11 % but L1/L2 at 85 %: the coalescing tool speaks, not this one.
  auto strided = testing::LoadFixture("h200", "k_strided_copy");
  EXPECT_FALSE(
      RunTool(*tool, strided.set, strided.Context(roofline::Bottleneck::kMemory)).triggered);
  for (auto [dir, name] : {std::pair{"h200", "k_swish_vec"},
                           {"h200-profile/profiles", "rms_norm"},
                           {"h200-profile/record", "cp_async_copy"}}) {
    auto f = testing::LoadFixture(dir, name);
    EXPECT_FALSE(RunTool(*tool, f.set, f.Context(roofline::Bottleneck::kMemory)).triggered) << name;
  }
  auto many =
      testing::LoadFixture("h200", "p_many_launches");  // 1 % of everything: not memory-bound
  EXPECT_FALSE(RunTool(*tool, many.set, many.Context()).triggered);
}

}  // namespace tools_builtin_dram_bandwidth_test
}  // namespace kernelpro::tools
