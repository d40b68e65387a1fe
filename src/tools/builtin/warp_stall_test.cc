#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_warp_stall_test {

using testing::MakeMetrics;
using testing::With;
using testing::Without;

const std::string kLong = "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct";
const std::string kBarrier = "smsp__warp_issue_stalled_barrier_per_warp_active.pct";
const std::string kNotSelected = "smsp__warp_issue_stalled_not_selected_per_warp_active.pct";

MetricSet Stalls(double long_scoreboard, double barrier = 5) {
  MetricSet m;
  for (const char* r : {"short_scoreboard", "branch_resolving", "membar", "lg_throttle",
                        "mio_throttle", "tex_throttle", "math_pipe_throttle", "wait",
                        "dispatch_stall", "no_instruction", "not_selected"}) {
    m.Set(std::string("smsp__warp_issue_stalled_") + r + "_per_warp_active.pct", 2);
  }
  m.Set(kLong, long_scoreboard);
  m.Set(kBarrier, barrier);
  return m;
}

TEST(WarpStallToolTest, TriggersOnDominantStallWithReasonSpecificFix) {
  auto tool = MakeWarpStallTool();
  ToolOutput out = testing::Run(*tool, Stalls(50));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.summary.find("long_scoreboard at 50 %"), std::string::npos) << out.summary;
  EXPECT_NE(out.root_cause.find("memory-dependency"), std::string::npos);
  ASSERT_FALSE(out.recommendations.empty());
  EXPECT_NE(out.recommendations[0].action.find("shared memory"), std::string::npos);

  ToolOutput barrier = testing::Run(*tool, Stalls(5, 45));
  ASSERT_TRUE(barrier.triggered);
  EXPECT_NE(barrier.title.find("barrier"), std::string::npos);
  EXPECT_NE(barrier.code_example.find("__shfl_down_sync"), std::string::npos);
}

TEST(WarpStallToolTest, BoundariesAndSeverity) {
  auto tool = MakeWarpStallTool();
  EXPECT_FALSE(testing::Run(*tool, Stalls(40)).triggered);  // trigger is strictly above 40 %
  EXPECT_TRUE(testing::Run(*tool, Stalls(40.01)).triggered);
  EXPECT_EQ(testing::Run(*tool, Stalls(59.9)).severity, Severity::kHigh);
  EXPECT_EQ(testing::Run(*tool, Stalls(60)).severity, Severity::kCritical);
  EXPECT_FALSE(testing::Run(*tool, Stalls(20)).triggered);
}

TEST(WarpStallToolTest, NotSelectedIsNeverTheProblem) {
  auto tool = MakeWarpStallTool();
  ToolOutput out = testing::Run(*tool, With(Stalls(10), kNotSelected, 70));
  EXPECT_FALSE(out.triggered);
}

TEST(WarpStallToolTest, SaturatedBandwidthTurnsLongScoreboardIntoABytesProblem) {
  auto tool = MakeWarpStallTool();
  MetricSet m =
      With(Stalls(85), "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 84);
  ToolOutput out = testing::Run(*tool, m);
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_NE(out.title.find("saturated"), std::string::npos);
  EXPECT_EQ(
      testing::Run(*tool,
                   With(m, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 79))
          .severity,
      Severity::kCritical);
}

TEST(WarpStallToolTest, MissingStallMetricSkipsAndDrainIsOptional) {
  auto tool = MakeWarpStallTool();
  ToolOutput out = testing::Run(*tool, Without(Stalls(50), kLong));
  EXPECT_TRUE(out.skipped);
  EXPECT_NE(out.skip_reason.find(kLong), std::string::npos);
  EXPECT_FALSE(testing::Run(*tool, Stalls(50)).skipped);  // drain absent
}

TEST(WarpStallToolTest, ThresholdOverrideChangesTheTrigger) {
  auto tool = MakeWarpStallTool();
  ToolContext c;
  c.overrides["warp_stall"]["high"] = 55;
  EXPECT_FALSE(testing::Run(*tool, Stalls(50), c).triggered);
  c.overrides["warp_stall"]["high"] = 30;
  c.overrides["warp_stall"]["critical"] = 45;
  ToolOutput out = testing::Run(*tool, Stalls(50), c);
  EXPECT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kCritical);
}

TEST(WarpStallToolTest, Deterministic) {
  auto tool = MakeWarpStallTool();
  EXPECT_EQ(ToJson(testing::Run(*tool, Stalls(70))).dump(),
            ToJson(testing::Run(*tool, Stalls(70))).dump());
}

TEST(WarpStallToolTest, NaiveMatmulFixtureShowsMemoryStalls) {
  // The naive matmul's stalls: lg_throttle 43.5 % (each thread issues its own narrow global load
  // per k step) ahead of long_scoreboard 26.4 %. Both are global-memory stalls; the text names
  // both.
  auto f = testing::LoadFixture("h200", "k_naive_matmul");
  ToolOutput out = RunTool(*MakeWarpStallTool(), f.set, f.Context(roofline::Bottleneck::kCompute));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.summary.find("lg_throttle at 43.5 %"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("long_scoreboard 26.4 %"), std::string::npos) << out.summary;
  EXPECT_NE(out.recommendations[0].action.find("shared memory"), std::string::npos);
}

TEST(WarpStallToolTest, StreamingKernelsGetBytesInFlightNotTiling) {
  auto tool = MakeWarpStallTool();
  // L1 handled as many global load sectors as DRAM delivered: nothing is reused.
  MetricSet streaming =
      With(With(Stalls(70), "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1e6),
           "dram__bytes_read.sum", 32e6);
  ToolOutput s = testing::Run(*tool, streaming);
  ASSERT_TRUE(s.triggered);
  EXPECT_NE(s.title.find("streamed global loads"), std::string::npos) << s.title;
  for (const Recommendation& r : s.recommendations)
    EXPECT_EQ(r.action.find("tiling"), std::string::npos) << r.action;
  // Four times as many sectors requested as read from DRAM: reuse exists, tiling is the fix.
  ToolOutput reuse =
      testing::Run(*tool, With(streaming, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 4e6));
  EXPECT_NE(reuse.recommendations.at(0).action.find("shared memory (tiling)"), std::string::npos);
  // The example swish candidate on the H200 (70.5 % of memory peak) streams its input.
  auto swish = testing::LoadFixture("h200-profile/profiles", "swish");
  ToolOutput real = RunTool(*tool, swish.set, swish.Context(roofline::Bottleneck::kMemory));
  ASSERT_TRUE(real.triggered);
  EXPECT_NE(real.title.find("streamed global loads"), std::string::npos) << real.title;
}

TEST(WarpStallToolTest, OtherFixtures) {
  auto tool = MakeWarpStallTool();
  // Streaming kernels at 84 % of DRAM peak: warps wait on memory because bandwidth is spent.
  auto vec = testing::LoadFixture("h200", "k_swish_vec");
  ToolOutput v = RunTool(*tool, vec.set, vec.Context(roofline::Bottleneck::kMemory));
  ASSERT_TRUE(v.triggered);
  EXPECT_EQ(v.severity, Severity::kLow);
  // The scalar version reaches only 44 %: the latency is not hidden.
  auto scalar = testing::LoadFixture("h200", "k_swish_scalar");
  ToolOutput s = RunTool(*tool, scalar.set, scalar.Context(roofline::Bottleneck::kMemory));
  ASSERT_TRUE(s.triggered);
  EXPECT_EQ(s.severity, Severity::kCritical);
  EXPECT_NE(s.summary.find("long_scoreboard at 66.7 %"), std::string::npos) << s.summary;
  // cuBLAS at 97 % tensor-pipe use: no stall dominates.
  auto cublas = testing::LoadFixture("h200", "p_cublas_bf16");
  EXPECT_FALSE(RunTool(*tool, cublas.set, cublas.Context()).triggered);
  // The wmma GEMM is fed through the MIO queue.
  auto wmma = testing::LoadFixture("h200", "k_wmma");
  ToolOutput w = RunTool(*tool, wmma.set, wmma.Context());
  ASSERT_TRUE(w.triggered);
  EXPECT_NE(w.summary.find("mio_throttle"), std::string::npos);
}

}  // namespace tools_builtin_warp_stall_test
}  // namespace kernelpro::tools
