#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_wave_quantization_test {

MetricSet Waves(double waves) {
  return testing::MakeMetrics({{"launch__waves_per_multiprocessor", waves},
                               {"device__attribute_multiprocessor_count", 132},
                               {"launch__grid_size", std::max(1.0, waves * 132)}});
}

TEST(WaveQuantizationToolTest, PartialLastWave) {
  auto tool = MakeWaveQuantizationTool();
  ToolOutput out = testing::Run(*tool, Waves(1.2));  // 1.2 / 2 = 60 %
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);
  EXPECT_NE(out.summary.find("1.2 waves"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("busy 60 %"), std::string::npos) << out.summary;
  EXPECT_NE(out.recommendations[0].action.find("multiple of 132"), std::string::npos);
  EXPECT_FALSE(testing::Run(*tool, Waves(1.94)).triggered);
  EXPECT_FALSE(testing::Run(*tool, Waves(7.76)).triggered);
  EXPECT_FALSE(testing::Run(*tool, Waves(1)).triggered);
}

TEST(WaveQuantizationToolTest, BoundariesAndSeverity) {
  auto tool = MakeWaveQuantizationTool();
  EXPECT_FALSE(testing::Run(*tool, Waves(1.5)).triggered);  // exactly 75 %
  EXPECT_TRUE(testing::Run(*tool, Waves(1.49)).triggered);
  EXPECT_EQ(testing::Run(*tool, Waves(0.5)).severity, Severity::kMedium);  // 66 of 132 SMs = 50 %
  EXPECT_EQ(testing::Run(*tool, Waves(0.25)).severity, Severity::kHigh);
}

TEST(WaveQuantizationToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeWaveQuantizationTool();
  EXPECT_TRUE(testing::Run(*tool, testing::MakeMetrics({{"launch__grid_size", 10}})).skipped);
  ToolContext c;
  c.overrides["wave_quantization"]["min_efficiency"] = 50;
  EXPECT_FALSE(testing::Run(*tool, Waves(1.2), c).triggered);
}

TEST(WaveQuantizationToolTest, Fixtures) {
  auto tool = MakeWaveQuantizationTool();
  auto mlp = testing::LoadFixture("h200-profile/profiles", "tiny_mlp");  // 32 blocks, 132 SMs
  ToolOutput t = RunTool(*tool, mlp.set, mlp.Context());
  ASSERT_TRUE(t.triggered);
  EXPECT_EQ(t.severity, Severity::kHigh);
  EXPECT_NE(t.summary.find("32 block(s) for 132 SMs"), std::string::npos) << t.summary;
  for (auto [dir, name] : {std::pair{"h200", "p_cublas_bf16"},
                           {"h200", "k_naive_matmul"},
                           {"h200-profile/profiles", "tril_matmul"},
                           {"h200-profile/profiles", "rms_norm"},
                           {"h200-profile/profiles", "swish"}}) {
    auto f = testing::LoadFixture(dir, name);
    EXPECT_FALSE(RunTool(*tool, f.set, f.Context()).triggered) << name;
  }
}

}  // namespace tools_builtin_wave_quantization_test
}  // namespace kernelpro::tools
