// `kernelpro eval` of a program (docs/programs.md) on the CPU: the program is the timed baseline,
// its REFERENCE gives the expected outputs, and the output says which is which.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace {

using testing::CliRun;
using testing::RunKernelpro;

const std::string kRoot = KERNELPRO_SOURCE_DIR;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(EvalCommandTest, AProgramIsCheckedAgainstItsReferenceAndTimedAgainstItself) {
  const std::string dir = kRoot + "/tests/problems/program_scaled_add";
  const std::string cache =
      (std::filesystem::temp_directory_path() / ("kp_eval_program_" + std::to_string(::getpid())))
          .string();
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

  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  CliRun json = RunKernelpro(json_args, 10);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.json["program"]["entry"], "scaled_add");
  EXPECT_EQ(json.json["program"]["reference"], dir + "/reference.py");
  EXPECT_EQ(json.json["program"]["baseline"], dir + "/problem.py");
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace kernelpro::cli
