#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_branch_divergence_test {

MetricSet Active(double threads) {
  return testing::MakeMetrics({{"smsp__thread_inst_executed_per_inst_executed.ratio", threads}});
}

TEST(BranchDivergenceToolTest, TriggersOnFewActiveThreads) {
  auto tool = MakeBranchDivergenceTool();
  ToolOutput out = testing::Run(*tool, Active(20));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);
  EXPECT_NE(out.summary.find("62.5 % SIMT efficiency"), std::string::npos) << out.summary;
  EXPECT_FALSE(testing::Run(*tool, Active(32)).triggered);
}

TEST(BranchDivergenceToolTest, BoundariesAndSeverity) {
  auto tool = MakeBranchDivergenceTool();
  EXPECT_FALSE(testing::Run(*tool, Active(24)).triggered);
  EXPECT_TRUE(testing::Run(*tool, Active(23.9)).triggered);
  EXPECT_EQ(testing::Run(*tool, Active(16)).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Active(15.9)).severity, Severity::kHigh);
}

TEST(BranchDivergenceToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeBranchDivergenceTool();
  EXPECT_TRUE(testing::Run(*tool, MetricSet{}).skipped);
  ToolContext c;
  c.overrides["branch_divergence"]["low"] = 30.5;
  EXPECT_TRUE(testing::Run(*tool, Active(29.7), c).triggered);
  EXPECT_FALSE(testing::Run(*tool, Active(29.7)).triggered);
}

TEST(BranchDivergenceToolTest, FixturesAreConvergent) {
  auto tool = MakeBranchDivergenceTool();
  for (auto [dir, name] : {std::pair{"h200", "k_naive_matmul"},
                           {"h200", "k_wmma"},
                           {"h200-profile/profiles", "tiny_mlp"},
                           {"h200-profile/record", "cublas_tril"}}) {
    auto f = testing::LoadFixture(dir, name);
    ToolOutput out = RunTool(*tool, f.set, f.Context());
    EXPECT_FALSE(out.skipped) << name;
    EXPECT_FALSE(out.triggered) << name;
  }
}

}  // namespace tools_builtin_branch_divergence_test
}  // namespace kernelpro::tools
