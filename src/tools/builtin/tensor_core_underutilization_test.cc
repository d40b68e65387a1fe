#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_tensor_core_underutilization_test {

const std::string kTensor =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
const std::string kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const std::string kMem = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";

MetricSet Tc(double util, double sm = 80, double mem = 30) {
  return testing::MakeMetrics({{kTensor, util}, {kSm, sm}, {kMem, mem}});
}

TEST(TensorCoreUnderutilizationToolTest, CriticalWhenUnusedOnComputeKernel) {
  auto tool = MakeTensorCoreUnderutilizationTool();
  ToolOutput out =
      testing::Run(*tool, Tc(0.5), testing::ContextFor(roofline::Bottleneck::kCompute));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kCritical);
  EXPECT_NE(out.summary.find("0.5 %"), std::string::npos) << out.summary;
  EXPECT_NE(out.recommendations[1].action.find("wgmma"), std::string::npos);
  ToolOutput ampere =
      testing::Run(*tool, Tc(0.5), testing::ContextFor(roofline::Bottleneck::kCompute, 8));
  EXPECT_EQ(ampere.recommendations[1].action.find("wgmma"), std::string::npos);
}

TEST(TensorCoreUnderutilizationToolTest, BoundariesAndSeverity) {
  auto tool = MakeTensorCoreUnderutilizationTool();
  auto c = testing::ContextFor(roofline::Bottleneck::kMixed);
  EXPECT_EQ(testing::Run(*tool, Tc(9.9), c).severity, Severity::kCritical);
  EXPECT_EQ(testing::Run(*tool, Tc(10), c).severity, Severity::kMedium);
  EXPECT_TRUE(testing::Run(*tool, Tc(49.9), c).triggered);
  EXPECT_FALSE(testing::Run(*tool, Tc(50), c).triggered);
}

TEST(TensorCoreUnderutilizationToolTest, QuietOnMemoryKernelsAndLowIntensity) {
  auto tool = MakeTensorCoreUnderutilizationTool();
  EXPECT_FALSE(
      testing::Run(*tool, Tc(0), testing::ContextFor(roofline::Bottleneck::kMemory)).triggered);
  EXPECT_FALSE(testing::Run(*tool, Tc(0, 20, 70)).triggered);  // no class: memory leads
  EXPECT_TRUE(testing::Run(*tool, Tc(0, 70, 20)).triggered);   // no class: compute leads
  // An elementwise kernel: 2 FLOP per DRAM byte, nothing to put on tensor cores.
  MetricSet ew = testing::MakeMetrics({{kTensor, 0},
                                       {kSm, 70},
                                       {kMem, 20},
                                       {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1e6},
                                       {"dram__bytes_read.sum", 5e5},
                                       {"dram__bytes_write.sum", 5e5}});
  EXPECT_FALSE(testing::Run(*tool, ew).triggered);
}

TEST(TensorCoreUnderutilizationToolTest, StarvedTensorCoresAreNotCalledUnused) {
  auto tool = MakeTensorCoreUnderutilizationTool();
  ToolOutput out = testing::Run(*tool, testing::With(Tc(4), "sass.tensor_hmma", 64),
                                testing::ContextFor(roofline::Bottleneck::kCompute));
  ASSERT_TRUE(out.triggered);
  EXPECT_NE(out.title.find("used but mostly idle"), std::string::npos);
}

TEST(TensorCoreUnderutilizationToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeTensorCoreUnderutilizationTool();
  EXPECT_TRUE(testing::Run(*tool, testing::Without(Tc(1), kTensor)).skipped);
  ToolContext c = testing::ContextFor(roofline::Bottleneck::kCompute);
  c.overrides["tensor_core_underutilization"]["moderate"] = 20;
  EXPECT_FALSE(testing::Run(*tool, Tc(30), c).triggered);
  c.overrides["tensor_core_underutilization"]["low"] = 40;
  c.overrides["tensor_core_underutilization"]["moderate"] = 60;
  EXPECT_EQ(testing::Run(*tool, Tc(30), c).severity, Severity::kCritical);
}

TEST(TensorCoreUnderutilizationToolTest, Fixtures) {
  auto tool = MakeTensorCoreUnderutilizationTool();
  auto naive = testing::LoadFixture("h200", "k_naive_matmul");
  ToolOutput out = RunTool(*tool, naive.set, naive.Context(roofline::Bottleneck::kCompute));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kCritical);
  EXPECT_NE(out.title.find("unused"), std::string::npos);
  // cuBLAS bf16 at 97 % tensor-pipe use: nothing to say.
  auto cublas = testing::LoadFixture("h200", "p_cublas_bf16");
  EXPECT_FALSE(
      RunTool(*tool, cublas.set, cublas.Context(roofline::Bottleneck::kCompute)).triggered);
  EXPECT_FALSE(RunTool(*tool, cublas.set, cublas.Context()).triggered);
  // The wmma GEMM uses tensor cores (HMMA in SASS) but starves them.
  auto wmma = testing::LoadFixture("h200", "k_wmma");
  ToolOutput w = RunTool(*tool, wmma.set, wmma.Context(roofline::Bottleneck::kCompute));
  ASSERT_TRUE(w.triggered);
  EXPECT_NE(w.title.find("used but mostly idle"), std::string::npos) << w.title;
  // A linear layer done with FFMA: compute-heavy without a class.
  auto linear = testing::LoadFixture("h200-profile/profiles", "linear_gelu");
  ToolOutput l = RunTool(*tool, linear.set, linear.Context());
  EXPECT_TRUE(l.triggered);
  // Softmax is memory-heavy: the tool does not suggest tensor cores.
  auto softmax = testing::LoadFixture("h200-profile/profiles", "scaled_softmax");
  EXPECT_FALSE(RunTool(*tool, softmax.set, softmax.Context()).triggered);
}

}  // namespace tools_builtin_tensor_core_underutilization_test
}  // namespace kernelpro::tools
