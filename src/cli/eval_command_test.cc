// `kernelpro eval` of a program (docs/programs.md) on the CPU: the program is the timed baseline,
// its REFERENCE gives the expected outputs, and the output says which is which.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_eval_command_test {

using testing::CliRun;
using testing::RunKernelpro;

const std::string kRoot = KERNELPRO_SOURCE_DIR;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(EvalCommandTest, AProgramIsCheckedAgainstItsReferenceAndTimedAgainstItself) {
  const std::string dir = kRoot + "/tests/problems/program_scaled_add";
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";  // shared
  const std::vector<std::string> args = {"eval",
                                         "--device",
                                         "cpu",
                                         "--problem",
                                         dir + "/problem.py",
                                         "--candidate",
                                         dir + "/candidates/cpu_scaled_add.py",
                                         "--cache-dir",
                                         cache};
  CliRun text = RunKernelpro(args, 10);
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_TRUE(Contains(text.out,
                       "baseline    problem.py (Python program, ENTRY scaled_add): "
                       "the time to beat\n"))
      << text.out;
  EXPECT_TRUE(Contains(text.out,
                       "reference   reference.py (PyTorch): the expected outputs; the "
                       "program matched them before any candidate was compared\n"));
  EXPECT_TRUE(Contains(text.out, "status      correct"));
  EXPECT_TRUE(Contains(text.out, "\nbaseline    ")) << "the timing line names the baseline";
  // The trials are counted apart from the timed calls sampled at random: the same every run.
  EXPECT_TRUE(Contains(text.out, "checks      8/8 trial input sets within atol=0.01 rtol=0.001"))
      << text.out;
  // The criterion the verdict was judged by, and the problem as the user would type it.
  EXPECT_TRUE(Contains(text.out,
                       "criterion   strict: allclose(atol 0.01, rtol 0.001) on every trial; an "
                       "fp32 problem also within 16x fp32's own error of an fp64 reference, or "
                       "1e-05 where that is smaller\n"))
      << text.out;

  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  CliRun json = RunKernelpro(json_args, 10);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.json["program"]["entry"], "scaled_add");
  EXPECT_EQ(json.json["program"]["reference"], dir + "/reference.py");
  EXPECT_EQ(json.json["program"]["baseline"], dir + "/problem.py");
  EXPECT_EQ(json.json["criterion"], "strict") << json.json.dump(1);

  // --correctness kernelbench: the paper's allclose; the fp64 precision reported, not failed.
  std::vector<std::string> kernelbench = json_args;
  kernelbench.insert(kernelbench.end(), {"--correctness", "kernelbench"});
  CliRun kb = RunKernelpro(kernelbench, 10);
  ASSERT_EQ(kb.exit_code, 0) << kb.err;
  EXPECT_EQ(kb.json["criterion"], "kernelbench") << kb.json.dump(1);
}

TEST(EvalCommandTest, ANamedCriterionExcludesTheTolerancesItSets) {
  for (const char* option : {"--atol", "--rtol", "--precision-check"}) {
    CliRun r = RunKernelpro(
        {"eval", "--device", "cpu", "--problem", kRoot + "/problems/swish/problem.py",
         "--candidate", kRoot + "/problems/swish/candidates/cuda_swish.py", "--correctness",
         "kernelbench", option, std::string(option) == "--precision-check" ? "fail" : "0.1"},
        2);
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_TRUE(Contains(r.err, std::string(option) + " excludes --correctness")) << r.err;
  }
  CliRun unknown = RunKernelpro({"eval", "--device", "cpu", "--problem",
                                 kRoot + "/problems/swish/problem.py", "--correctness", "loose"},
                                2);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Contains(unknown.err, "--correctness")) << unknown.err;
}

// A forged timer result, end to end: the test binary reports every timed call of an honest
// candidate 10,000 times shorter than it took. Its nanoseconds are below what reading its inputs
// takes at this CPU's calibrated rates (eval/speed_of_light.h), so the verdict refuses them.
TEST(EvalCommandTest, AForgedTimeBelowTheSpeedOfLightIsIncorrectNeverFaster) {
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";  // shared
  CliRun forged = testing::RunKernelproWithHooks(
      {"eval", "--device", "cpu", "--problem", kRoot + "/tests/problems/tiny_swish.py",
       "--candidate", kRoot + "/tests/candidates/good/cpu_tiny_swish.py", "--cache-dir", cache,
       "--shapes", "off", "--json", "--quiet"},
      10, {{"KERNELPRO_TEST_SCALE_CANDIDATE_TIMES", "1e-4"}});
  ASSERT_EQ(forged.exit_code, 1) << forged.out << forged.err;  // incorrect: the check failed
  const Json& result = forged.json;                            // one candidate: its result object
  EXPECT_EQ(result["status"], "incorrect") << result.dump(1);
  EXPECT_TRUE(Contains(result["message"].get<std::string>(), "faster than the speed of light"))
      << result["message"];
  EXPECT_TRUE(result["speed_of_light"]["enforced"].get<bool>());
  EXPECT_NE(result["speed_of_light"]["basis"].get<std::string>().find("calibrated"),
            std::string::npos);
}

// The exit code gates a script: 0 only when every candidate is correct, 1 when any one is not.
TEST(EvalCommandTest, OneCandidateThatIsNotCorrectMakesTheExitCodeOne) {
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";  // shared
  const std::string problem = kRoot + "/tests/problems/tiny_swish.py";
  const std::string good = kRoot + "/tests/candidates/good/cpu_tiny_swish.py";
  const std::vector<std::string> common = {
      "--device",        "cpu", "--problem",       problem, "--cache-dir",    cache,
      "--shapes",        "off", "--trials",        "2",     "--extra-trials", "0",
      "--timing-trials", "10",  "--timing-rounds", "1",     "--quiet"};
  std::vector<std::string> mixed = {"eval", "--candidate", good, "--candidate",
                                    kRoot + "/tests/candidates/faults/common/no_modelnew.py"};
  mixed.insert(mixed.end(), common.begin(), common.end());
  CliRun r = RunKernelpro(mixed, 10);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "status      correct")) << r.out;  // both verdicts printed
  EXPECT_TRUE(Contains(r.out, "status      compile_error")) << r.out;
  std::vector<std::string> alone = {"eval", "--candidate", good};
  alone.insert(alone.end(), common.begin(), common.end());
  EXPECT_EQ(RunKernelpro(alone, 10).exit_code, 0);
}

}  // namespace cli_eval_command_test
}  // namespace kernelpro::cli
