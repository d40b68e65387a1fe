// `kernelpro prompt` as a user runs it: the exact prompt on stdout (the same bytes as the reviewed
// goldens), --json for programs, what was trimmed, and a clear exit 2 for every bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_prompt_command_test {

using testing::CliRun;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kSwish = kRoot + "/problems/swish/problem.py";
const std::string kSwishCuda = kRoot + "/problems/swish/candidates/cuda_swish.py";
const std::string kGuidance = kRoot + "/tests/golden/guidance/swish.md";
const std::string kSwishAnalysis = kRoot + "/tests/fixtures/h200-advise/swish.analysis.json";

CliRun Prompt(std::vector<std::string> args) {
  args.insert(args.begin(), "prompt");
  return testing::RunKernelpro(args, 2, {}, {"KERNELPRO_CUTLASS_DIR"});
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// A directory that looks like a CUTLASS checkout to the command's check.
std::string FakeCutlass() {
  const std::string dir = std::string(KERNELPRO_BINARY_DIR) + "/prompt-test-cutlass";
  std::filesystem::create_directories(dir + "/include/cutlass");
  std::ofstream(dir + "/include/cutlass/cutlass.h") << "#pragma once\n";
  return dir;
}

TEST(PromptCommandTest, PrintsExactlyTheReviewedPrompt) {
  CliRun r = Prompt({"--mode", "initial", "--problem", kSwish, "--analysis", kSwishAnalysis});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ReadFile(kRoot + "/tests/golden/prompts/initial_pytorch_sm90.txt"));
  EXPECT_TRUE(Has(r.out, "## What bounds this problem (Stage 1)\n")) << r.out;
  EXPECT_FALSE(Has(r.err, "no --analysis")) << r.err;
  EXPECT_EQ(r.out.rfind("=== system ===\n", 0), 0u);
  EXPECT_TRUE(Has(r.out, "\n=== user ===\n"));
  // No GPU was named and none is detected: the user is told which one the prompt is for.
  EXPECT_TRUE(Has(r.err, "no --gpu given")) << r.err;
  EXPECT_TRUE(Has(r.err, "sm_90")) << r.err;
  EXPECT_TRUE(Has(r.err, " characters (system ")) << r.err;

  CliRun named = Prompt({"--mode", "initial", "--problem", kSwish, "--gpu", "H100"});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_FALSE(Has(named.err, "no --gpu given")) << named.err;
  EXPECT_TRUE(Has(named.out, "# Target GPU: H100"));
  // Without Stage 1's analysis the prompt has no Stage-1 part, and the user is told a run's has.
  EXPECT_FALSE(Has(named.out, "(Stage 1)")) << named.out;
  EXPECT_TRUE(Has(named.err, "no --analysis: a run's prompts also show Stage 1's analysis"))
      << named.err;
}

TEST(PromptCommandTest, StageOneIsInEveryModesPromptButNotForACpuTarget) {
  const std::string cuda_program = kRoot + "/problems/cuda/row_softmax/problem.cu";
  const std::string cuda_analysis =
      kRoot + "/tests/fixtures/h200-programs/cuda-row_softmax.analysis.json";
  CliRun initial = Prompt({"--mode", "initial", "--problem", cuda_program, "--gpu", "H200",
                           "--analysis", cuda_analysis});
  ASSERT_EQ(initial.exit_code, 0) << initial.err;
  EXPECT_EQ(initial.out,
            ReadFile(kRoot + "/tests/golden/prompts/initial_cuda_row_softmax_sm90.txt"));
  CliRun debug = Prompt({"--mode", "debug", "--problem", kSwish, "--parent", kSwishCuda,
                         "--feedback-file", kRoot + "/tests/fixtures/prompts/torch_build_error.txt",
                         "--gpu", "H200", "--analysis", kSwishAnalysis});
  ASSERT_EQ(debug.exit_code, 0) << debug.err;
  EXPECT_TRUE(Has(debug.out, "## What bounds this problem (Stage 1)\n")) << debug.out;
  EXPECT_TRUE(Has(debug.out, "- Class: memory-bound, confidence high.")) << debug.out;
  CliRun optimize = Prompt({"--mode", "optimize", "--problem", kSwish, "--parent", kSwishCuda,
                            "--gpu", "H200", "--analysis", kSwishAnalysis});
  ASSERT_EQ(optimize.exit_code, 0) << optimize.err;
  EXPECT_TRUE(Has(optimize.out, "- Class: memory-bound, confidence high.")) << optimize.out;
  CliRun cpu = Prompt(
      {"--mode", "initial", "--problem", kSwish, "--device", "cpu", "--analysis", kSwishAnalysis});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_FALSE(Has(cpu.out, "(Stage 1)")) << cpu.out;
  EXPECT_TRUE(Has(cpu.err, "--analysis is not shown for --device cpu")) << cpu.err;
}

TEST(PromptCommandTest, DebugPromptMatchesItsGolden) {
  CliRun r =
      Prompt({"--mode", "debug", "--problem", kRoot + "/tests/problems/half_scale.py", "--parent",
              kRoot + "/tests/fixtures/prompts/half_scale_bad_build.py", "--feedback-file",
              kRoot + "/tests/fixtures/prompts/torch_build_error.txt", "--gpu", "H200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ReadFile(kRoot + "/tests/golden/prompts/debug_pytorch_sm90.txt"));
}

TEST(PromptCommandTest, JsonHoldsTheSamePromptWithItsSectionsAndTrimming) {
  const std::vector<std::string> args = {
      "--mode",          "optimize",   "--problem",    kSwish,
      "--parent",        kSwishCuda,   "--speedup",    "1.93",
      "--feedback-file", kGuidance,    "--memory",     kRoot + "/tests/fixtures/prompts/memory.md",
      "--gpu",           "sm_80",      "--candidates", "3",
      "--cutlass-dir",   FakeCutlass()};
  CliRun text = Prompt(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  CliRun r = Prompt(json_args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_object()) << r.out;
  std::vector<std::string> keys;
  for (const auto& [key, value] : r.json.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"sections", "system", "trimmed", "user"}));
  const std::string system = r.json["system"].get<std::string>();
  const std::string user = r.json["user"].get<std::string>();
  EXPECT_EQ(text.out, "=== system ===\n" + system + "=== user ===\n" + user);
  EXPECT_EQ(r.json["sections"],
            Json::parse(R"(["base_strategies", "input_pytorch", "gpu_sm80", "cutlass", "memory",
                            "output_contract", "mode_optimize", "examples", "problem",
                            "parent_code", "feedback"])"));
  EXPECT_TRUE(r.json["trimmed"].is_array() && r.json["trimmed"].empty());
  EXPECT_TRUE(Has(system, "`candidates` holds exactly 3 entries"));
  EXPECT_TRUE(Has(system, "-I" + FakeCutlass() + "/include"));
  EXPECT_TRUE(Has(system, "m16n8k16"));
  EXPECT_TRUE(Has(user, "Its measured speedup over the reference: 1.93x."));
}

TEST(PromptCommandTest, ASmallBudgetTrimsAndSaysWhat) {
  CliRun full = Prompt({"--mode", "optimize", "--problem", kSwish, "--parent", kSwishCuda,
                        "--feedback-file", kGuidance, "--gpu", "H200", "--json"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const size_t size =
      full.json["system"].get<std::string>().size() + full.json["user"].get<std::string>().size();
  CliRun r =
      Prompt({"--mode", "optimize", "--problem", kSwish, "--parent", kSwishCuda, "--feedback-file",
              kGuidance, "--gpu", "H200", "--max-chars", std::to_string(size - 4000), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(r.json["trimmed"].size(), 2u) << r.out;
  EXPECT_EQ(r.json["trimmed"][0].get<std::string>().rfind("examples: dropped", 0), 0u);
  EXPECT_LE(r.json["system"].get<std::string>().size() + r.json["user"].get<std::string>().size(),
            size - 4000);
  CliRun text =
      Prompt({"--mode", "optimize", "--problem", kSwish, "--parent", kSwishCuda, "--feedback-file",
              kGuidance, "--gpu", "H200", "--max-chars", std::to_string(size - 4000)});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Has(text.err, "trimmed examples: dropped")) << text.err;

  CliRun tiny = Prompt(
      {"--mode", "optimize", "--problem", kSwish, "--parent", kSwishCuda, "--max-chars", "3000"});
  EXPECT_EQ(tiny.exit_code, 2);
  EXPECT_TRUE(tiny.out.empty());
  EXPECT_TRUE(Has(tiny.err, "--max-chars")) << tiny.err;
  EXPECT_TRUE(Has(tiny.err, ", parent_code ")) << tiny.err;
  EXPECT_TRUE(Has(tiny.err, "never trimmed")) << tiny.err;
}

TEST(PromptCommandTest, ARunsMemoryStoreIsInjectedAsTheRunWouldInjectIt) {
  const std::string store = ::testing::TempDir() + "/memory.jsonl";
  std::ofstream(store)
      << R"({"iteration": 2, "section": "errors_and_corrections", "text": "float4 loads faulted on x[1:]; added a scalar path"})"
      << "\n"
      << R"({"iteration": 3, "section": "learnings", "text": "the kernel is at the bandwidth bound"})"
      << "\n";
  CliRun r = Prompt({"--mode", "initial", "--problem", kRoot + "/problems/swish/problem.py",
                     "--gpu", "sm_90", "--memory", store});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("## Errors & Corrections\n- [iteration 2] float4 loads faulted on x[1:]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("## Learnings\n- [iteration 3] the kernel is at the bandwidth bound"),
            std::string::npos);
  CliRun missing = Prompt({"--mode", "initial", "--problem", kRoot + "/problems/swish/problem.py",
                           "--memory", "/no/such/memory.jsonl"});
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(PromptCommandTest, BadInputsExitWithTwoAndSayWhy) {
  const std::string parent = kSwishCuda;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--problem", kSwish}, "--mode initial|debug|optimize is required"},
      {{"--mode", "fast", "--problem", kSwish}, "--mode 'fast'"},
      {{"--mode", "initial"}, "--problem FILE is required"},
      {{"--mode", "initial", "--problem", kRoot + "/no/such.py"},
       "--problem: " + kRoot + "/no/such.py: no such file"},
      {{"--mode", "initial", "--problem", kRoot + "/tests/problems/no_model.py"},
       "defines no class Model"},
      {{"--mode", "debug", "--problem", kSwish, "--feedback-file", kGuidance},
       "debug mode needs the failing candidate's code"},
      {{"--mode", "debug", "--problem", kSwish, "--parent", parent},
       "debug mode needs the compiler, runtime or correctness errors"},
      {{"--mode", "optimize", "--problem", kSwish}, "optimize mode needs the working candidate"},
      {{"--mode", "initial", "--problem", kSwish, "--parent", parent},
       "--parent, --feedback-file and --speedup are for --mode debug or optimize"},
      {{"--mode", "optimize", "--problem", kSwish, "--parent", kRoot + "/no/such.py"},
       "--parent: " + kRoot + "/no/such.py: no such file"},
      {{"--mode", "optimize", "--problem", kSwish, "--parent", parent, "--speedup", "fast"},
       "--speedup 'fast'"},
      {{"--mode", "initial", "--problem", kSwish, "--gpu", "Voodoo 5"}, "unknown GPU 'Voodoo 5'"},
      {{"--mode", "initial", "--problem", kSwish, "--candidates", "0"}, "--candidates '0'"},
      {{"--mode", "initial", "--problem", kSwish, "--candidates", "17"}, "from 1 to 16"},
      {{"--mode", "initial", "--problem", kSwish, "--candidates", "two"}, "--candidates 'two'"},
      {{"--mode", "initial", "--problem", kSwish, "--max-chars", "-5"}, "--max-chars '-5'"},
      {{"--mode", "initial", "--problem", kSwish, "--cutlass-dir", kRoot},
       "no include/cutlass/cutlass.h below it"},
      {{"--mode", "initial", "--problem", kSwish, "--analysis", kSwish}, "--analysis "},
      {{"--mode", "initial", "--problem", kSwish, "--memory", kRoot + "/no/memory.md"},
       "--memory: " + kRoot + "/no/memory.md: no such file"},
  };
  for (const Case& c : cases) {
    CliRun r = Prompt(c.args);
    std::string joined;
    for (const std::string& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << joined;
    EXPECT_EQ(r.err.rfind("kernelpro prompt: ", 0), 0u) << joined << "\n" << r.err;
    EXPECT_TRUE(Has(r.err, c.message)) << joined << "\n" << r.err;
  }
}

}  // namespace cli_prompt_command_test
}  // namespace kernelpro::cli
