#include <gtest/gtest.h>

#include "profile/collect.h"
#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"
#include "tools/metric_set.h"

namespace kernelpro::tools {
namespace tools_builtin_tensor_core_generation_test {

using testing::ContextFor;
using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

MetricSet Sass(double wgmma, double hmma, double cublas = 0) {
  return MakeMetrics({{"sass.tensor_wgmma", wgmma},
                      {"sass.tensor_hmma", hmma},
                      {"sass.tensor_imma", 0},
                      {"sass.tensor_dmma", 0},
                      {"sass.tensor_bmma", 0},
                      {"sass.calls_cublas", cublas},
                      {"sass.calls_cudnn", 0},
                      {"sass.instructions", 500}});
}

TEST(TensorCoreGenerationToolTest, HmmaOnHopperRecommendsWarpgroupMma) {
  auto tool = MakeTensorCoreGenerationTool();
  ToolOutput out = Check(*tool, Sass(0, 16), ContextFor(std::nullopt, 9));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.recommendations.at(0).action.find("warpgroup MMA"), std::string::npos);
  EXPECT_NE(out.recommendations.at(0).expected_improvement.find("1.3-1.5x"), std::string::npos);
}

TEST(TensorCoreGenerationToolTest, HmmaBeforeHopperIsTheRightGeneration) {
  auto tool = MakeTensorCoreGenerationTool();
  ToolOutput out = Check(*tool, Sass(0, 16), ContextFor(std::nullopt, 8));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_EQ(out.summary.find("switch"), std::string::npos);
}

TEST(TensorCoreGenerationToolTest, WarpgroupMmaIsReportedWithoutASwitch) {
  auto tool = MakeTensorCoreGenerationTool();
  ToolOutput out = Check(*tool, Sass(4, 0), ContextFor(std::nullopt, 9));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_NE(out.title.find("warpgroup MMA"), std::string::npos);
}

TEST(TensorCoreGenerationToolTest, NoTensorCoresOnlyMattersWhenComputeBound) {
  auto tool = MakeTensorCoreGenerationTool();
  EXPECT_FALSE(Check(*tool, Sass(0, 0), ContextFor(std::nullopt)).triggered);
  EXPECT_FALSE(Check(*tool, Sass(0, 0), ContextFor(roofline::Bottleneck::kMemory)).triggered);
  ToolOutput compute = Check(*tool, Sass(0, 0), ContextFor(roofline::Bottleneck::kCompute));
  ASSERT_TRUE(compute.triggered);
  EXPECT_EQ(compute.severity, Severity::kHigh);
  EXPECT_TRUE(Check(*tool, Sass(0, 0), ContextFor(roofline::Bottleneck::kMixed)).triggered);
}

TEST(TensorCoreGenerationToolTest, LibraryCallIsTheLibraryPath) {
  auto tool = MakeTensorCoreGenerationTool();
  ToolOutput out = Check(*tool, Sass(0, 0, 2), ContextFor(std::nullopt));
  ASSERT_TRUE(out.triggered);
  EXPECT_NE(out.title.find("library"), std::string::npos) << out.title;
}

TEST(TensorCoreGenerationToolTest, MissingMetricSkips) {
  auto tool = MakeTensorCoreGenerationTool();
  ToolOutput out = Check(*tool, Without(Sass(0, 16), "sass.tensor_wgmma"));
  EXPECT_TRUE(out.skipped);
  EXPECT_NE(out.skip_reason.find("no SASS"), std::string::npos) << out.skip_reason;
}

TEST(TensorCoreGenerationToolTest, WithoutSassTheLibraryKernelsNcuProfiledTellThePath) {
  // torch's bf16 matmul on the H200: only ncu saw it (cuBLAS's nvjet warpgroup-MMA kernels).
  profile::Metrics metrics = profile::CollectFromArtifacts(profile::ArtifactsIn(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200", "p_cublas_bf16"));
  MetricSet set = BuildMetricSet(metrics);
  ToolContext context = ContextFor(roofline::Bottleneck::kCompute, 9);
  context.metrics = &metrics;
  auto tool = MakeTensorCoreGenerationTool();
  ToolOutput out = Check(*tool, set, context);
  ASSERT_TRUE(out.triggered) << out.skip_reason;
  EXPECT_EQ(out.severity, Severity::kLow);
  EXPECT_NE(out.title.find("library kernels"), std::string::npos) << out.title;
  EXPECT_NE(out.title.find("nvjet_sm90"), std::string::npos) << out.title;
  EXPECT_NE(out.root_cause.find("warpgroup MMA"), std::string::npos) << out.root_cause;
  // cuBLAS's fp32 SGEMM (the tril_matmul reference) is a SIMT kernel: CUDA cores, not tensor cores.
  profile::Metrics sgemm = profile::CollectFromArtifacts(profile::ArtifactsIn(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200-profile/record",
      "tril_matmul_reference"));
  context.metrics = &sgemm;
  ToolOutput simt = Check(*tool, BuildMetricSet(sgemm), context);
  ASSERT_TRUE(simt.triggered);
  EXPECT_EQ(simt.severity, Severity::kMedium);
  EXPECT_NE(simt.title.find("Library GEMM on CUDA cores"), std::string::npos) << simt.title;
  EXPECT_NE(simt.recommendations.at(0).action.find("TF32"), std::string::npos);
  // A profile with no library kernel and no SASS says nothing rather than guessing.
  profile::Metrics plain = profile::CollectFromArtifacts(profile::ArtifactsIn(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200", "k_swish_vec"));
  plain.sass.reset();
  context.metrics = &plain;
  EXPECT_TRUE(Check(*tool, BuildMetricSet(plain), context).skipped);
}

TEST(TensorCoreGenerationToolTest, ThresholdOverride) {
  auto tool = MakeTensorCoreGenerationTool();
  ToolContext context = ContextFor(std::nullopt, 9);
  context.overrides["tensor_core_generation"]["warpgroup_sm_major"] =
      10;  // treat sm_90 as pre-warpgroup
  EXPECT_EQ(Check(*tool, Sass(0, 16), context).severity, Severity::kLow);
}

TEST(TensorCoreGenerationToolTest, RecordedWmmaRecommendsWarpgroupMma) {
  auto tool = MakeTensorCoreGenerationTool();
  auto run = testing::RunOnFixture(*tool, {"h200", "k_wmma"});
  EXPECT_EQ(run.context.sm_major, 9);
  ASSERT_TRUE(run.output.triggered) << run.output.skip_reason;
  EXPECT_EQ(run.output.severity, Severity::kHigh);
  EXPECT_NE(run.output.recommendations.at(0).action.find("warpgroup MMA"), std::string::npos);
}

TEST(TensorCoreGenerationToolTest, RecordedWgmmaTileIsTheRightGeneration) {
  auto tool = MakeTensorCoreGenerationTool();
  auto run = testing::RunOnFixture(*tool, {"h200-profile/record", "wgmma_tile"});
  ASSERT_TRUE(run.output.triggered) << run.output.skip_reason;
  EXPECT_EQ(run.output.severity, Severity::kLow);
  EXPECT_NE(run.output.title.find("warpgroup MMA"), std::string::npos) << run.output.title;
  for (const Recommendation& r : run.output.recommendations) {
    EXPECT_EQ(r.action.find("Rewrite the main loop"), std::string::npos);
  }
}

TEST(TensorCoreGenerationToolTest, RecordedCublasCallIsTheLibraryPath) {
  auto tool = MakeTensorCoreGenerationTool();
  auto run = testing::RunOnFixture(*tool, {"h200-profile/record", "cublas_tril"});
  ASSERT_TRUE(run.output.triggered) << run.output.skip_reason;
  EXPECT_NE(run.output.title.find("library"), std::string::npos) << run.output.title;
  // cublasSgemm is fp32: tensor cores only with TF32 allowed.
  EXPECT_NE(run.output.recommendations.at(0).action.find("TF32"), std::string::npos);
}

TEST(TensorCoreGenerationToolTest, RecordedNaiveMatmulUnderComputeClassFires) {
  auto tool = MakeTensorCoreGenerationTool();
  auto run =
      testing::RunOnFixture(*tool, {"h200", "k_naive_matmul"}, roofline::Bottleneck::kCompute);
  ASSERT_TRUE(run.output.triggered) << run.output.skip_reason;
  EXPECT_NE(run.output.title.find("No tensor-core"), std::string::npos);
}

}  // namespace tools_builtin_tensor_core_generation_test
}  // namespace kernelpro::tools
