// The agents' shared vocabulary: parsing what users type (--gpu, --mode, --feedback), detecting a
// problem's input kind, and reading the profiling agent's answer forgivingly.
#include "agents/types.h"

#include <gtest/gtest.h>

namespace kernelpro::agents {
namespace {

TEST(AgentTypesTest, GpuTargetsFromArchitecturesAndNames) {
  EXPECT_EQ(ParseGpuTarget("sm_90")->arch, "sm_90");
  EXPECT_EQ(ParseGpuTarget("sm90a")->arch, "sm_90a");
  EXPECT_EQ(ParseGpuTarget("80")->arch, "sm_80");
  EXPECT_EQ(ParseGpuTarget("8.9")->arch, "sm_89");
  EXPECT_EQ(ParseGpuTarget("NVIDIA H200")->arch, "sm_90");
  EXPECT_EQ(ParseGpuTarget("A100-SXM4-80GB")->arch, "sm_80");
  EXPECT_EQ(ParseGpuTarget("L40S")->arch, "sm_89");
  EXPECT_EQ(ParseGpuTarget("L4")->arch, "sm_89");
  EXPECT_EQ(ParseGpuTarget("B200")->arch, "sm_100");
  GpuTarget h = *ParseGpuTarget("sm_90a");
  EXPECT_EQ(h.major(), 9);
  EXPECT_EQ(h.minor(), 0);
  EXPECT_EQ(ParseGpuTarget("sm_100")->major(), 10);
  auto bad = ParseGpuTarget("voodoo 5");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown GPU 'voodoo 5'"), std::string::npos);
}

TEST(AgentTypesTest, InputKindFromTheReference) {
  EXPECT_EQ(DetectInputKind("import torch\nclass Model(nn.Module): ..."), InputKind::kPyTorch);
  EXPECT_EQ(DetectInputKind("import triton\nimport triton.language as tl\n"), InputKind::kTriton);
  EXPECT_EQ(DetectInputKind("from torch.utils.cpp_extension import load_inline\n"),
            InputKind::kCuda);
  auto real = ReadProblemSource(std::string(KERNELPRO_SOURCE_DIR) + "/problems/swish/problem.py");
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_EQ(real->kind, InputKind::kPyTorch);
  EXPECT_FALSE(ReadProblemSource("/no/such/problem.py").ok());
}

TEST(AgentTypesTest, ModesAndFeedbackParseAsUsersTypeThem) {
  EXPECT_EQ(ParsePromptMode("optimise"), PromptMode::kOptimize);
  EXPECT_EQ(ParsePromptMode("DEBUG"), PromptMode::kDebug);
  EXPECT_FALSE(ParsePromptMode("refine").has_value());
  EXPECT_EQ(ParseFeedbackMode("proactive"), FeedbackMode::kTools);
  EXPECT_EQ(ParseFeedbackMode("raw"), FeedbackMode::kRaw);
  EXPECT_EQ(ToString(MemorySection::kErrorsAndCorrections), "errors_and_corrections");
  EXPECT_EQ(Title(MemorySection::kErrorsAndCorrections), "Errors & Corrections");
}

TEST(AgentTypesTest, ProfileAnalysisIsReadForgivinglyAndRanked) {
  auto a = ProfileAnalysisFromJson(Json::parse(R"({
    "bottleneck": "memory", "severity": "HIGH",
    "recommendations": [{"priority": 2, "action": "unroll"}, "use float4 loads",
                        {"priority": 1, "action": "fuse the epilogue", "rationale": "one pass"},
                        {"priority": 3}]})"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->severity, "high");
  ASSERT_EQ(a->recommendations.size(), 3u) << "an entry with no action is dropped";
  EXPECT_EQ(a->recommendations[0].action, "fuse the epilogue");
  EXPECT_EQ(a->recommendations[1].action, "unroll");
  auto back = ProfileAnalysisFromJson(ToJson(*a));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToJson(*back), ToJson(*a));
  EXPECT_FALSE(ProfileAnalysisFromJson(Json{{"severity", "low"}}).ok());
  EXPECT_FALSE(ProfileAnalysisFromJson(Json::array()).ok());
}

}  // namespace
}  // namespace kernelpro::agents
