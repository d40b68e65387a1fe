// The programmer's GPU section follows the GPU the run uses: detected unless --gpu names one,
// nothing detected on cpu, and the generic section (never another GPU's) when detection fails.
// The detector is a fake here, so no GPU is needed.
#include "app/prompt_gpu.h"

#include <gtest/gtest.h>

#include "agents/prompt_builder.h"

namespace kernelpro::app {
namespace app_prompt_gpu_test {

const std::string kSwish = std::string(KERNELPRO_SOURCE_DIR) + "/problems/swish/problem.py";

agents::GpuTarget Target(const std::string& arch, const std::string& name) {
  agents::GpuTarget target;
  target.arch = arch;
  target.name = name;
  return target;
}

// A detector that reports `target` and counts how often it was asked.
GpuDetector Reporting(const agents::GpuTarget& target, int& calls) {
  return [target, &calls]() -> Result<agents::GpuTarget> {
    ++calls;
    return target;
  };
}

// The programmer's first prompt for swish, written for `gpu`.
agents::Prompt InitialPrompt(const agents::GpuTarget& gpu) {
  agents::PromptContext context;
  context.mode = agents::PromptMode::kInitial;
  auto problem = agents::ReadProblemSource(kSwish);
  EXPECT_TRUE(problem.ok()) << problem.status().message();
  if (problem.ok()) context.problem = *problem;
  context.gpu = gpu;
  auto prompt = agents::BuildPrompt(context);
  EXPECT_TRUE(prompt.ok()) << prompt.status().message();
  return prompt.ok() ? *prompt : agents::Prompt{};
}

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(PromptGpuTest, AnA100RunGetsTheAmpereSection) {
  int calls = 0;
  PromptGpu chosen = ChoosePromptGpu("cuda", std::nullopt,
                                     Reporting(Target("sm_80", "NVIDIA A100-SXM4-80GB"), calls));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(chosen.target.arch, "sm_80");
  EXPECT_EQ(chosen.note,
            "prompts: written for the GPU the run uses, NVIDIA A100-SXM4-80GB (sm_80), detected");
  agents::Prompt prompt = InitialPrompt(chosen.target);
  ASSERT_GE(prompt.sections.size(), 3u);
  EXPECT_EQ(prompt.sections[2], "gpu_sm80");
  EXPECT_TRUE(Has(prompt.system, "# Target GPU: NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(Has(prompt.system, "mma.sync"));
  EXPECT_FALSE(Has(prompt.system, "wgmma")) << "no Hopper notes on an A100";
}

TEST(PromptGpuTest, GpuGivenWinsAndNothingIsDetected) {
  int calls = 0;
  PromptGpu chosen = ChoosePromptGpu("cuda", Target("sm_100", "B200"),
                                     Reporting(Target("sm_80", "NVIDIA A100"), calls));
  EXPECT_EQ(chosen.target.arch, "sm_100");
  EXPECT_EQ(chosen.note, "");
  EXPECT_EQ(InitialPrompt(chosen.target).sections[2], "gpu_sm100");
  EXPECT_EQ(calls, 0);
}

TEST(PromptGpuTest, OnCpuNothingIsDetected) {
  int calls = 0;
  PromptGpu chosen =
      ChoosePromptGpu("cpu", std::nullopt, Reporting(Target("sm_80", "NVIDIA A100"), calls));
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(chosen.note, "");
}

TEST(PromptGpuTest, AFailedDetectionGivesTheGenericSectionAndSaysWhy) {
  PromptGpu chosen = ChoosePromptGpu("cuda", std::nullopt, []() -> Result<agents::GpuTarget> {
    return Status::NotFound("the worker saw no CUDA device");
  });
  EXPECT_EQ(chosen.target.arch, "");
  EXPECT_EQ(chosen.note,
            "prompts: the GPU could not be detected (the worker saw no CUDA device); the prompts "
            "carry the generic GPU section (name the GPU with --gpu)");
  agents::Prompt prompt = InitialPrompt(chosen.target);
  EXPECT_EQ(prompt.sections[2], "gpu_generic");
  for (const char* hopper : {"sm_90", "wgmma", "Hopper"}) {
    EXPECT_FALSE(Has(prompt.system, hopper)) << hopper;
  }
}

}  // namespace app_prompt_gpu_test
}  // namespace kernelpro::app
