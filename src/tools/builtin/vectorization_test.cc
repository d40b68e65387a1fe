#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_vectorization_test {

MetricSet Mem(double sectors_per_request, double dram = 44) {
  return testing::MakeMetrics(
      {{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1000 * sectors_per_request},
       {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1000},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", dram},
       {"dram__throughput.avg.pct_of_peak_sustained_elapsed", dram},
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 30}});
}

TEST(VectorizationToolTest, ScalarAccessTriggers) {
  auto tool = MakeVectorizationTool();
  auto c = testing::ContextFor(roofline::Bottleneck::kMemory);
  ToolOutput out = testing::Run(*tool, Mem(4), c);
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.summary.find("4 sectors per request"), std::string::npos) << out.summary;
  EXPECT_NE(out.code_example.find("float4"), std::string::npos);
  EXPECT_FALSE(testing::Run(*tool, Mem(16), c).triggered);
  // SASS evidence beats the sector heuristic.
  MetricSet sass =
      testing::With(testing::With(Mem(4), "sass.global_load_32", 1), "sass.global_load_128", 1);
  EXPECT_FALSE(testing::Run(*tool, sass, c).triggered);
}

TEST(VectorizationToolTest, BoundariesAndSeverity) {
  auto tool = MakeVectorizationTool();
  auto c = testing::ContextFor(roofline::Bottleneck::kMemory);
  EXPECT_TRUE(testing::Run(*tool, Mem(4.5), c).triggered);
  EXPECT_FALSE(testing::Run(*tool, Mem(4.6), c).triggered);
  EXPECT_EQ(testing::Run(*tool, Mem(4, 59.9), c).severity, Severity::kHigh);
  EXPECT_EQ(testing::Run(*tool, Mem(4, 60), c).severity, Severity::kMedium);
  EXPECT_FALSE(
      testing::Run(*tool, Mem(4), testing::ContextFor(roofline::Bottleneck::kCompute)).triggered);
}

TEST(VectorizationToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeVectorizationTool();
  EXPECT_TRUE(testing::Run(*tool, testing::Without(
                                      Mem(4), "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"))
                  .skipped);
  ToolContext c = testing::ContextFor(roofline::Bottleneck::kMemory);
  c.overrides["vectorization"]["max_narrow_sectors"] = 3;
  EXPECT_FALSE(testing::Run(*tool, Mem(4), c).triggered);
}

TEST(VectorizationToolTest, Fixtures) {
  auto tool = MakeVectorizationTool();
  auto scalar = testing::LoadFixture("h200", "k_swish_scalar");
  for (auto cls : {std::optional<roofline::Bottleneck>(roofline::Bottleneck::kMemory),
                   std::optional<roofline::Bottleneck>()}) {
    ToolOutput s = RunTool(*tool, scalar.set, scalar.Context(cls));
    ASSERT_TRUE(s.triggered);
    EXPECT_EQ(s.severity, Severity::kHigh);
    EXPECT_NE(s.summary.find("DRAM throughput is 44.2 %"), std::string::npos) << s.summary;
  }
  auto vec = testing::LoadFixture("h200", "k_swish_vec");
  EXPECT_FALSE(RunTool(*tool, vec.set, vec.Context(roofline::Bottleneck::kMemory)).triggered);
  for (auto [dir, name] : {std::pair{"h200-profile/profiles", "swish"},
                           {"h200-profile/profiles", "rms_norm"},
                           {"h200-profile/profiles", "scaled_softmax"},
                           {"h200-profile/record", "cp_async_copy"},
                           {"h200", "p_many_launches"}}) {
    auto f = testing::LoadFixture(dir, name);
    ToolOutput out = RunTool(*tool, f.set, f.Context(roofline::Bottleneck::kMemory));
    EXPECT_FALSE(out.triggered) << name << ": " << out.summary;
  }
}

}  // namespace tools_builtin_vectorization_test
}  // namespace kernelpro::tools
