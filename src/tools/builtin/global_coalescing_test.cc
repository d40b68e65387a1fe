#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_global_coalescing_test {

// Loads 1000 requests at `ld` sectors each, stores 1000 at `st`, 32-bit accesses in SASS.
MetricSet Traffic(double ld, double st, double sass_width_bits = 32) {
  MetricSet m = testing::MakeMetrics({{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1000 * ld},
                                      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1000},
                                      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 1000 * st},
                                      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 1000}});
  if (sass_width_bits > 0) {
    std::string w = "_" + FormatNumber(sass_width_bits);
    m.Set("sass.global_load" + w, 1);
    m.Set("sass.global_store" + w, 1);
  }
  return m;
}

TEST(GlobalCoalescingToolTest, StridedStoresTrigger) {
  auto tool = MakeGlobalCoalescingTool();
  ToolOutput out = testing::Run(*tool, Traffic(4, 32));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kCritical);
  EXPECT_EQ(out.title, "Uncoalesced global stores");
  EXPECT_NE(out.summary.find("32 sectors per request where 4 would do"), std::string::npos)
      << out.summary;
  EXPECT_FALSE(testing::Run(*tool, Traffic(4, 4)).triggered);
}

TEST(GlobalCoalescingToolTest, Float4AtSixteenSectorsIsCoalesced) {
  auto tool = MakeGlobalCoalescingTool();
  EXPECT_FALSE(testing::Run(*tool, Traffic(16, 16, 128)).triggered);
  EXPECT_TRUE(testing::Run(*tool, Traffic(16, 16, 32)).triggered);  // scalar at 16: 4x waste
  // Width unknown: only more than 16 sectors/request can be called uncoalesced.
  EXPECT_FALSE(testing::Run(*tool, Traffic(16, 16, 0)).triggered);
  EXPECT_TRUE(testing::Run(*tool, Traffic(4, 32, 0)).triggered);
}

TEST(GlobalCoalescingToolTest, BoundariesAndSeverity) {
  auto tool = MakeGlobalCoalescingTool();
  EXPECT_FALSE(testing::Run(*tool, Traffic(7.9, 4)).triggered);
  EXPECT_EQ(testing::Run(*tool, Traffic(8, 4)).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Traffic(16, 4)).severity, Severity::kHigh);
  EXPECT_EQ(testing::Run(*tool, Traffic(32, 4)).severity, Severity::kCritical);
}

TEST(GlobalCoalescingToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeGlobalCoalescingTool();
  EXPECT_TRUE(
      testing::Run(*tool, testing::Without(Traffic(4, 32),
                                           "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"))
          .skipped);
  ToolContext c;
  c.overrides["global_coalescing"]["waste"] = 10;
  EXPECT_FALSE(testing::Run(*tool, Traffic(32, 4), c).triggered);
}

TEST(GlobalCoalescingToolTest, Fixtures) {
  auto tool = MakeGlobalCoalescingTool();
  auto strided = testing::LoadFixture("h200", "k_strided_copy");
  ToolOutput s = RunTool(*tool, strided.set, strided.Context(roofline::Bottleneck::kMemory));
  ASSERT_TRUE(s.triggered);
  EXPECT_EQ(s.severity, Severity::kCritical);
  EXPECT_EQ(s.title, "Uncoalesced global stores");
  EXPECT_NE(s.summary.find("32 sectors per request where 4 would do"), std::string::npos)
      << s.summary;
  for (auto [dir, name] : {std::pair{"h200", "k_swish_vec"},
                           {"h200", "k_swish_scalar"},
                           {"h200", "k_naive_matmul"},
                           {"h200", "p_many_launches"},
                           {"h200-profile/profiles", "rms_norm"},
                           {"h200-profile/profiles", "swish"},
                           {"h200-profile/record", "cp_async_copy"}}) {
    auto f = testing::LoadFixture(dir, name);
    ToolOutput out = RunTool(*tool, f.set, f.Context());
    EXPECT_FALSE(out.triggered) << name << ": " << out.summary;
  }
}

}  // namespace tools_builtin_global_coalescing_test
}  // namespace kernelpro::tools
