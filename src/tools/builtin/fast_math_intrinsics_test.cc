#include <gtest/gtest.h>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_fast_math_intrinsics_test {

using testing::ContextFor;
using testing::MakeMetrics;
using testing::With;
using testing::Without;

// testing::Run under a name gtest's Test::Run does not hide.
ToolOutput Check(const ProfilingTool& tool, const MetricSet& metrics,
                 const ToolContext& context = {}) {
  return testing::Run(tool, metrics, context);
}

// A scalar elementwise kernel: one 32-bit load, one store, one IEEE division.
MetricSet Scalar(double fchk = 1, double calls = 1) {
  MetricSet m =
      MakeMetrics({{"sass.instructions", 150},
                   {"sass.mufu", 3},
                   {"sass.ffma", 15},
                   {"sass.global_load_128", 0},
                   {"sass.global_load_64", 0},
                   {"sass.global_load_32", 1},
                   {"sass.global_load_narrow", 0},
                   {"sass.global_store_128", 0},
                   {"sass.global_store_64", 0},
                   {"sass.global_store_32", 1},
                   {"sass.global_store_narrow", 0},
                   {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 40},
                   {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 90}});
  if (fchk > 0) m.Set("sass.op.FCHK", fchk);
  if (calls > 0) m.Set("sass.op.CALL", calls);
  return m;
}

TEST(FastMathIntrinsicsToolTest, IeeeDivisionInBandwidthBoundKernelFires) {
  auto tool = MakeFastMathIntrinsicsTool();
  ToolOutput out = Check(*tool, Scalar());
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);  // 100 of 150 static instructions
  EXPECT_NE(out.summary.find("energy, not time"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("150 static"), std::string::npos) << out.summary;
  EXPECT_NE(out.recommendations.at(0).action.find("__fdividef"), std::string::npos);
  EXPECT_FALSE(out.code_example.empty());
}

TEST(FastMathIntrinsicsToolTest, NoIeeeSequencesOrNotBandwidthBoundStayQuiet) {
  auto tool = MakeFastMathIntrinsicsTool();
  EXPECT_FALSE(Check(*tool, Scalar(0, 0)).triggered);
  EXPECT_FALSE(Check(*tool, Scalar(), ContextFor(roofline::Bottleneck::kCompute)).triggered);
  EXPECT_TRUE(Check(*tool, Scalar(), ContextFor(roofline::Bottleneck::kMemory)).triggered);
  MetricSet compute_side = With(Scalar(), "sm__throughput.avg.pct_of_peak_sustained_elapsed", 95);
  EXPECT_FALSE(Check(*tool, compute_side).triggered);
  // No class and no ncu throughputs: cannot tell it is bandwidth-bound.
  MetricSet no_ncu = Without(Without(Scalar(), "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                             "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_FALSE(Check(*tool, no_ncu).triggered);
}

TEST(FastMathIntrinsicsToolTest, ReciprocalAndSqrtSlowPathsCount) {
  auto tool = MakeFastMathIntrinsicsTool();
  ToolOutput out = Check(*tool, Scalar(0, 1));
  ASSERT_TRUE(out.triggered);
  EXPECT_NE(out.title.find("reciprocal/sqrt"), std::string::npos) << out.title;
}

TEST(FastMathIntrinsicsToolTest, PerRowDivisionIsNotWorthIt) {
  auto tool = MakeFastMathIntrinsicsTool();
  // One division per eight float4 loads: a per-row scale, not per element.
  MetricSet per_row = With(With(Scalar(), "sass.global_load_128", 8), "sass.global_store_128", 8);
  EXPECT_FALSE(Check(*tool, per_row).triggered);
  // Boundary: 1 site for 4 elements is exactly 0.25 per element.
  MetricSet quarter = With(With(Scalar(), "sass.global_load_32", 4), "sass.global_store_32", 4);
  EXPECT_TRUE(Check(*tool, quarter).triggered);
  MetricSet fifth = With(With(Scalar(), "sass.global_load_32", 5), "sass.global_store_32", 5);
  EXPECT_FALSE(Check(*tool, fifth).triggered);
}

TEST(FastMathIntrinsicsToolTest, SeverityByStaticShare) {
  auto tool = MakeFastMathIntrinsicsTool();
  EXPECT_EQ(Check(*tool, With(Scalar(), "sass.instructions", 1000)).severity, Severity::kLow);
}

TEST(FastMathIntrinsicsToolTest, MissingMetricSkips) {
  auto tool = MakeFastMathIntrinsicsTool();
  EXPECT_TRUE(Check(*tool, Without(Scalar(), "sass.instructions")).skipped);
}

TEST(FastMathIntrinsicsToolTest, ThresholdOverride) {
  auto tool = MakeFastMathIntrinsicsTool();
  ToolContext context;
  context.overrides["fast_math_intrinsics"]["min_sites"] = 2;
  EXPECT_FALSE(Check(*tool, Scalar(), context).triggered);
  context.overrides["fast_math_intrinsics"]["min_sites"] = 1;
  context.overrides["fast_math_intrinsics"]["min_sites_per_element"] = 0.01;
  MetricSet per_row = With(With(Scalar(), "sass.global_load_128", 8), "sass.global_store_128", 8);
  EXPECT_TRUE(Check(*tool, per_row, context).triggered);
}

TEST(FastMathIntrinsicsToolTest, RecordedSwishScalarFiresAndVectorDoesNot) {
  auto tool = MakeFastMathIntrinsicsTool();
  auto scalar = testing::RunOnFixture(*tool, {"h200", "k_swish_scalar"});
  ASSERT_FALSE(scalar.output.skipped) << scalar.output.skip_reason;
  EXPECT_TRUE(scalar.output.triggered);
  EXPECT_NE(scalar.output.summary.find("1 FCHK"), std::string::npos) << scalar.output.summary;
  auto vec = testing::RunOnFixture(*tool, {"h200", "k_swish_vec"});
  ASSERT_FALSE(vec.output.skipped) << vec.output.skip_reason;
  EXPECT_FALSE(vec.output.triggered) << vec.output.summary;
}

}  // namespace tools_builtin_fast_math_intrinsics_test
}  // namespace kernelpro::tools
