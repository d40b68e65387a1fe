#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_memcpy_hot_path_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Copies(double htod, double dtoh, double time_us, double e2e = 100) {
  return MakeMetrics({{"timeline.memcpy_count", 2},
                      {"timeline.memcpy_bytes", htod + dtoh},
                      {"timeline.memcpy_time_us", time_us},
                      {"timeline.memcpy_htod_bytes", htod},
                      {"timeline.memcpy_dtoh_bytes", dtoh},
                      {"timeline.end_to_end_us", e2e}});
}

TEST(MemcpyHotPathToolTest, HostCopiesFire) {
  auto tool = MakeMemcpyHotPathTool();
  ToolOutput out = Check(*tool, Copies(4096, 4, 30));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.summary.find("4096 bytes host-to-device"), std::string::npos) << out.summary;
  EXPECT_NE(out.recommendations.at(1).action.find("pinned"), std::string::npos);
}

TEST(MemcpyHotPathToolTest, DeviceToDeviceCopiesAreNotHostTraffic) {
  auto tool = MakeMemcpyHotPathTool();
  MetricSet dtod = With(Copies(0, 0, 10), "timeline.memcpy_bytes", 1 << 20);
  EXPECT_FALSE(Check(*tool, dtod).triggered);
}

TEST(MemcpyHotPathToolTest, SeverityByTimeShare) {
  auto tool = MakeMemcpyHotPathTool();
  EXPECT_EQ(Check(*tool, Copies(8, 0, 5)).severity, Severity::kLow);  // 5 %: not above medium
  EXPECT_EQ(Check(*tool, Copies(8, 0, 5.1)).severity, Severity::kMedium);
  EXPECT_EQ(Check(*tool, Copies(8, 0, 20)).severity, Severity::kMedium);
  EXPECT_EQ(Check(*tool, Copies(8, 0, 21)).severity, Severity::kHigh);
}

TEST(MemcpyHotPathToolTest, MissingMetricSkips) {
  auto tool = MakeMemcpyHotPathTool();
  EXPECT_TRUE(Check(*tool, Without(Copies(8, 0, 5), "timeline.memcpy_htod_bytes")).skipped);
}

TEST(MemcpyHotPathToolTest, ThresholdOverride) {
  auto tool = MakeMemcpyHotPathTool();
  ToolContext context;
  context.overrides["memcpy_hot_path"]["min_bytes"] = 1024;
  EXPECT_FALSE(Check(*tool, Copies(8, 0, 5), context).triggered);
  EXPECT_TRUE(Check(*tool, Copies(2048, 0, 5), context).triggered);
}

TEST(MemcpyHotPathToolTest, RecordedForwardsCopyNothing) {
  auto tool = MakeMemcpyHotPathTool();
  for (const auto& fixture : testing::AllFixtureCases()) {
    EXPECT_FALSE(testing::RunOnFixture(*tool, fixture).output.triggered) << fixture.name;
  }
}

}  // namespace tools_builtin_memcpy_hot_path_test
}  // namespace kernelpro::tools
