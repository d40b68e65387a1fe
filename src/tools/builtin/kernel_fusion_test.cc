#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_kernel_fusion_test {

using testing::MakeMetrics;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Timeline(double kernels, double avg_us) {
  return MakeMetrics({{"timeline.kernel_count", kernels},
                      {"timeline.gpu_busy_us", kernels * avg_us},
                      {"timeline.end_to_end_us", kernels * avg_us * 3}});
}

TEST(KernelFusionToolTest, ManyShortKernelsFire) {
  auto tool = MakeKernelFusionTool();
  EXPECT_EQ(tool->source(), ToolSource::kTimeline);
  ToolOutput out = Check(*tool, Timeline(200, 1));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.summary.find("200 kernels"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("3x"), std::string::npos) << out.summary;
  EXPECT_FALSE(out.recommendations.empty());
}

TEST(KernelFusionToolTest, FewOrLongKernelsStayQuiet) {
  auto tool = MakeKernelFusionTool();
  EXPECT_FALSE(Check(*tool, Timeline(7, 1)).triggered);
  EXPECT_FALSE(Check(*tool, Timeline(100, 50)).triggered);
  EXPECT_FALSE(Check(*tool, Timeline(1, 0.5)).triggered);
}

TEST(KernelFusionToolTest, Boundaries) {
  auto tool = MakeKernelFusionTool();
  EXPECT_TRUE(Check(*tool, Timeline(8, 1)).triggered);    // min_kernels inclusive
  EXPECT_FALSE(Check(*tool, Timeline(20, 5)).triggered);  // average must be below 5 us
  EXPECT_TRUE(Check(*tool, Timeline(20, 4.99)).triggered);
  EXPECT_EQ(Check(*tool, Timeline(49, 1)).severity, Severity::kMedium);
  EXPECT_EQ(Check(*tool, Timeline(50, 1)).severity, Severity::kHigh);
}

TEST(KernelFusionToolTest, MissingMetricSkips) {
  auto tool = MakeKernelFusionTool();
  EXPECT_TRUE(Check(*tool, Without(Timeline(200, 1), "timeline.gpu_busy_us")).skipped);
}

TEST(KernelFusionToolTest, ThresholdOverride) {
  auto tool = MakeKernelFusionTool();
  ToolContext context;
  context.overrides["kernel_fusion"]["max_avg_kernel_us"] = 100;
  EXPECT_TRUE(Check(*tool, Timeline(100, 50), context).triggered);
  context.overrides["kernel_fusion"]["min_kernels"] = 500;
  EXPECT_FALSE(Check(*tool, Timeline(100, 1), context).triggered);
}

TEST(KernelFusionToolTest, RecordedManyLaunchesFires) {
  auto tool = MakeKernelFusionTool();
  auto run = testing::RunOnFixture(*tool, {"h200", "p_many_launches"});
  ASSERT_FALSE(run.output.skipped) << run.output.skip_reason;
  EXPECT_TRUE(run.output.triggered);
  EXPECT_EQ(run.output.severity, Severity::kHigh);
}

}  // namespace tools_builtin_kernel_fusion_test
}  // namespace kernelpro::tools
