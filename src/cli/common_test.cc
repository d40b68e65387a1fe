// What every subcommand shares: numbers checked the same way everywhere (finite, in range, a usage
// error naming the option, the value and the range), and directories made without exceptions and
// taken back when a command fails before it produced anything.
#include "cli/common.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_common_test {

namespace fs = std::filesystem;
using kernelpro::testing::CliRun;
using kernelpro::testing::RunKernelpro;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kProblem = kRoot + "/tests/problems/tiny_swish.py";

// Every numeric option of every subcommand, with a value it must refuse: exit 2 and a message that
// names the option and the value, before anything runs.
TEST(NumericOptionsTest, EveryCommandRefusesNaNInfinityAndOutOfRangeValues) {
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";
  const std::vector<std::vector<std::string>> commands = {
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--atol", "nan"},
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--rtol", "-0.1"},
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--time-budget", "nan"},
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--time-budget", "-1"},
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--trials", "0"},
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--timing-trials", "inf"},
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--jobs", "1000"},
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--build-timeout", "0"},
      {"profile", "--problem", kProblem, "--ncu-timeout", "-5"},
      {"analyze", "--problem", kProblem, "--latency-us", "nan"},
      {"analyze", "--problem", kProblem, "--ncu-timeout", "1e9"},
      {"advise", "--problem", kProblem, "--max-chars", "0"},
      {"advise", "--from", kRoot + "/tests/fixtures/h200", "--name", "k_wmma", "--threshold",
       "warp_stall.high=nan"},
      {"prompt", "--mode", "optimize", "--problem", kProblem, "--speedup", "inf"},
      {"prompt", "--mode", "initial", "--problem", kProblem, "--candidates", "0"},
      {"prompt", "--mode", "initial", "--problem", kProblem, "--max-chars", "-3"},
      {"llm", "ping", "--llm", "replay:x.jsonl", "--max-tokens", "0"},
      {"optimize", "--problem", kProblem, "--max-tokens", "nan"},
      {"resume", kRoot, "--time-limit", "nan"},
  };
  for (std::vector<std::string> args : commands) {
    const std::string value = args.back(), option = args[args.size() - 2];
    args.insert(args.end(), {"--cache-dir", cache});
    if (args[0] == "prompt" || args[0] == "llm" || args[0] == "resume" ||
        (args[0] == "advise" && option == "--threshold")) {
      args.resize(args.size() - 2);  // no --cache-dir there
    }
    CliRun r = RunKernelpro(args, 1);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << option << " " << value << ": " << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
    const std::string number = option == "--threshold" ? value.substr(value.find('=') + 1) : value;
    EXPECT_NE(r.err.find("'" + number + "' is not accepted: give a "), std::string::npos) << r.err;
  }
}

TEST(NumericOptionsTest, EveryUsageErrorExitsWithTwoAndHelpWithZero) {
  EXPECT_EQ(RunKernelpro({"eval", "--no-such-option"}, 1).exit_code, 2);     // CLI11: 109
  EXPECT_EQ(RunKernelpro({"eval", "--problem", kProblem}, 1).exit_code, 2);  // 106: --candidate
  EXPECT_EQ(RunKernelpro({"eval", "--problem", "/no/such.py", "--candidate", "c"}, 1).exit_code,
            2);  // 105
  EXPECT_EQ(RunKernelpro({"tools"}, 1).exit_code, 2);
  EXPECT_EQ(RunKernelpro({}, 1).exit_code, 2);
  EXPECT_EQ(RunKernelpro({"--help"}, 1).exit_code, 0);
  EXPECT_EQ(RunKernelpro({"eval", "--help"}, 1).exit_code, 0);
  EXPECT_EQ(RunKernelpro({"--version"}, 1).exit_code, 0);
}

// ---- directories

class CreatedDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kp_created_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CreatedDirectoryTest, UndoRemovesTheTopmostDirectoryItMadeWithEverythingInside) {
  auto made = CreatedDirectory::Create((dir_ / "a" / "b" / "c").string(), "--save");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(fs::is_directory(dir_ / "a" / "b" / "c"));
  std::ofstream(dir_ / "a" / "b" / "c" / "out.txt") << "partial";
  made->Undo();
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_TRUE(fs::exists(dir_));
}

TEST_F(CreatedDirectoryTest, UndoInAnExistingDirectoryRemovesOnlyWhatWasAdded) {
  std::ofstream(dir_ / "kept.txt") << "the user's";
  auto made = CreatedDirectory::Create(dir_.string(), "--save");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::ofstream(dir_ / "new.txt") << "ours";
  fs::create_directories(dir_ / "work" / "requests");
  made->Undo();
  EXPECT_TRUE(fs::exists(dir_ / "kept.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "new.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "work"));
}

TEST_F(CreatedDirectoryTest, RemoveIfEmptyNeverTakesWhatAnotherProcessWroteThere) {
  // A cache or --save directory may be shared: only the empty directories this made go.
  auto made = CreatedDirectory::Create((dir_ / "a" / "b" / "c").string(), "--cache-dir");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::ofstream(dir_ / "a" / "b" / "theirs.txt") << "another process's";
  made->RemoveIfEmpty();
  EXPECT_FALSE(fs::exists(dir_ / "a" / "b" / "c"));
  EXPECT_TRUE(fs::exists(dir_ / "a" / "b" / "theirs.txt"));
  auto empty = CreatedDirectory::Create((dir_ / "x" / "y").string(), "--save");
  ASSERT_TRUE(empty.ok());
  empty->RemoveIfEmpty();
  EXPECT_FALSE(fs::exists(dir_ / "x"));
  EXPECT_TRUE(fs::exists(dir_));
}

TEST_F(CreatedDirectoryTest, PathsThatCannotBeDirectoriesAreErrorsNamingThePathAndTheReason) {
  // Root ignores permission bits; a path under a regular file or in /proc fails even for root.
  auto under_file = CreatedDirectory::Create("/etc/hostname/x", "--work-dir");
  ASSERT_FALSE(under_file.ok());
  EXPECT_EQ(under_file.status().message(),
            "cannot create --work-dir /etc/hostname/x: Not a "
            "directory");
  auto in_proc = CreatedDirectory::Create("/proc/kernelpro-x", "--save");
  ASSERT_FALSE(in_proc.ok());
  EXPECT_EQ(in_proc.status().message().rfind("cannot create --save /proc/kernelpro-x: ", 0), 0u)
      << in_proc.status().message();
  auto file = CreatedDirectory::Create("/etc/hostname", "--save");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            "cannot create --save /etc/hostname: it exists and is not a directory");
}

// The commands that used to abort with an uncaught std::filesystem_error (exit 134).
TEST_F(CreatedDirectoryTest, CommandsGivenUnusableDirectoriesExitWithTwoAndSayWhy) {
  const std::string cache = (dir_ / "cache").string();
  CliRun eval = RunKernelpro({"eval", "--problem", kProblem, "--candidate", kProblem, "--cache-dir",
                              cache, "--work-dir", "/etc/hostname/x"},
                             1);
  EXPECT_EQ(eval.exit_code, 2) << eval.err;
  EXPECT_EQ(eval.err,
            "kernelpro eval: cannot create --work-dir /etc/hostname/x: Not a directory\n");
  EXPECT_FALSE(fs::exists(cache)) << "the cache directory it made for nothing is taken back";

  CliRun cache_dir = RunKernelpro(
      {"eval", "--problem", kProblem, "--candidate", kProblem, "--cache-dir", "/proc/kp-cache"}, 1);
  EXPECT_EQ(cache_dir.exit_code, 2) << cache_dir.err;
  EXPECT_NE(cache_dir.err.find("cannot create --cache-dir /proc/kp-cache: "), std::string::npos)
      << cache_dir.err;

  for (const char* command : {"profile", "advise"}) {
    CliRun save = RunKernelpro(
        {command, "--problem", kProblem, "--cache-dir", cache, "--save", "/proc/kp-save"}, 1);
    EXPECT_EQ(save.exit_code, 2) << command << ": " << save.err;
    EXPECT_EQ(
        save.err.rfind(
            std::string("kernelpro ") + command + ": cannot create --save /proc/kp-save: ", 0),
        0u)
        << save.err;
  }
}

// Messages show paths as a person types them: no checkout's or home's absolute prefix.
TEST(DisplayPathTest, RelativeUnderTheCurrentDirectoryTildeUnderHomeElseAsGiven) {
  const std::string cwd = fs::current_path().string();
  EXPECT_EQ(DisplayPath(cwd + "/problems/swish/problem.py"), "problems/swish/problem.py");
  const char* home = std::getenv("HOME");
  if (home != nullptr && std::string(home).size() > 1 &&
      fs::path(cwd).lexically_relative(home).string().rfind("..", 0) == 0) {
    EXPECT_EQ(DisplayPath(std::string(home) + "/.cache/kernelpro"), "~/.cache/kernelpro");
  }
  EXPECT_EQ(DisplayPath("/nonexistent-root/x.py"), "/nonexistent-root/x.py");
  EXPECT_EQ(DisplayPath("relative/x.py"), "relative/x.py");
}

}  // namespace cli_common_test
}  // namespace kernelpro::cli
