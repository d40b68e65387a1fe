// `kernelpro new-problem`: the files it writes, what it refuses, and that the CPU template
// evaluates correct as written (a real C++ build, so about a minute on a small machine).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_new_problem_command_test {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::RunKernelpro;

class NewProblemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kp_new_problem_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // python's own parser on `path`: "" when it parses, else the error.
  static std::string ParsePython(const fs::path& path) {
    ProcessOptions p;
    p.argv = {"/usr/bin/python3", "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())",
              path.string()};
    auto r = RunProcess(p);
    if (!r.ok()) return r.status().message();
    return r->exit_code == 0 ? "" : r->stderr_text;
  }

  fs::path dir_;
};

TEST_F(NewProblemTest, TheCpuTemplateEvaluatesCorrectAsWritten) {
  CliRun made =
      RunKernelpro({"new-problem", "relu_scale", "--device", "cpu", "--dir", dir_.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const fs::path problem = dir_ / "relu_scale/problem.py";
  const fs::path candidate = dir_ / "relu_scale/candidates/cpu_relu_scale.py";
  EXPECT_NE(made.out.find("kernelpro eval --device cpu --problem " + problem.string() +
                          " --candidate " + candidate.string()),
            std::string::npos)
      << made.out;
  // The rule a newcomer must not miss is in the file they edit.
  EXPECT_NE(Read(problem).find("Return CPU tensors"), std::string::npos);
  EXPECT_NE(Read(candidate).find("kp_relu_scale_cpu"), std::string::npos);

  CliRun eval = RunKernelpro({"eval",
                              "--device",
                              "cpu",
                              "--problem",
                              problem.string(),
                              "--candidate",
                              candidate.string(),
                              "--cache-dir",
                              std::string(KERNELPRO_BINARY_DIR) + "/test-cache",
                              "--python",
                              "/usr/bin/python3",
                              "--json",
                              "--trials",
                              "2",
                              "--extra-trials",
                              "1",
                              "--timing-trials",
                              "10",
                              "--timing-rounds",
                              "1"},
                             10);
  ASSERT_EQ(eval.exit_code, 0) << eval.out << eval.err;
  ASSERT_TRUE(eval.json.is_object()) << eval.out;  // one candidate: one object
  EXPECT_EQ(eval.json["status"], "correct") << eval.json.dump(2);
}

TEST_F(NewProblemTest, TheCudaTemplateIsValidPythonWithAKernel) {
  CliRun made = RunKernelpro({"new-problem", "mine", "--device", "cuda", "--dir", dir_.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const fs::path candidate = dir_ / "mine/candidates/cuda_mine.py";
  EXPECT_EQ(ParsePython(candidate), "");
  EXPECT_EQ(ParsePython(dir_ / "mine/problem.py"), "");
  const std::string text = Read(candidate);
  EXPECT_NE(text.find("__global__ void mine_kernel("), std::string::npos);
  EXPECT_NE(text.find("cuda_sources=_CUDA"), std::string::npos);
  EXPECT_EQ(text.find("@NAME@"), std::string::npos);
}

TEST_F(NewProblemTest, ExistingFilesAreNeverOverwritten) {
  ASSERT_EQ(RunKernelpro({"new-problem", "p", "--device", "cpu", "--dir", dir_.string()}).exit_code,
            0);
  std::ofstream(dir_ / "p/problem.py") << "# mine\n";
  // Another device's candidate would be new, but the problem exists: nothing is written.
  CliRun again = RunKernelpro({"new-problem", "p", "--device", "cuda", "--dir", dir_.string()});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already exists"), std::string::npos);
  EXPECT_EQ(std::count(again.err.begin(), again.err.end(), '\n'), 1) << again.err;
  EXPECT_EQ(Read(dir_ / "p/problem.py"), "# mine\n");
  EXPECT_FALSE(fs::exists(dir_ / "p/candidates/cuda_p.py"));
}

TEST_F(NewProblemTest, ANameThatCannotNameAModuleIsAUsageError) {
  for (const char* name : {"9lives", "my-problem", "a/b", "x y"}) {
    CliRun run = RunKernelpro({"new-problem", name, "--dir", dir_.string()});
    EXPECT_EQ(run.exit_code, 2) << name;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find("letters, digits and _"), std::string::npos) << run.err;
  }
  // A name that is only too long is told so, not given the character rule.
  const std::string long_name(70, 'a');
  CliRun too_long = RunKernelpro({"new-problem", long_name, "--dir", dir_.string()});
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_NE(too_long.err.find("' is 70 characters long: at most 64"), std::string::npos)
      << too_long.err;
  EXPECT_EQ(too_long.err.find("letters, digits"), std::string::npos) << too_long.err;
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace cli_new_problem_command_test
}  // namespace kernelpro::cli
