// `kernelpro export` as a user runs it: a CPU candidate exported, pip-installed into a fresh
// virtual environment (offline, seeing Debian's torch) and its operator checked against the
// reference; a recorded H200 run's best kernel exported on this machine (the CUDA sources and
// the measured speedup land in the package); the refusals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_testing.h"
#include "core/json_io.h"
#include "export/package_export.h"

namespace kernelpro::cli {
namespace cli_export_command_test {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::RunBinary;
using testing::RunKernelpro;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kCache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";  // shared

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Slurp(const fs::path& path) {
  auto text = ReadFileText(path.string());
  return text.ok() ? *text : "";
}

fs::path Scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("kp_export_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ExportCommandTest, ACpuCandidateWithWeightsInstallsWithPipAndItsOperatorMatchesTheReference) {
  const fs::path dir = Scratch("cpu");
  const std::string out = (dir / "pkg").string();
  CliRun r = RunKernelpro(
      {"export", "--device", "cpu", "--problem", kRoot + "/tests/problems/small_linear.py",
       "--candidate", kRoot + "/tests/candidates/good/cpu_small_linear.py", "--out", out,
       "--cache-dir", kCache, "--quiet"},
      10);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "operator    torch.ops.kernelpro.small_linear\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "extensions  kp_good_cpu_small_linear\n")) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "guards      the benchmark's inputs (get_inputs()) on cpu: 64x256 "
                       "float32\n"))
      << r.out;
  // Its evaluation checked the derived shapes too: the guards serve their family.
  EXPECT_TRUE(Contains(r.out,
                       "shape family (all 2 checked shapes correct): any shapes of ranks "
                       "[2] and dtypes ['float32']"))
      << r.out;
  EXPECT_TRUE(fs::exists(out + "/csrc/kp_good_cpu_small_linear/main.cpp"));
  EXPECT_EQ(Slurp(out + "/kernelpro_small_linear/candidate.py"),
            Slurp(kRoot + "/tests/candidates/good/cpu_small_linear.py"))
      << "the candidate ships verbatim";
  // The commands to run name the interpreter kernelpro used (it has torch), not a bare pip.
  EXPECT_TRUE(Contains(r.out, "install     /")) << r.out;
  EXPECT_TRUE(Contains(r.out, " -m pip install --no-build-isolation ")) << r.out;
  EXPECT_TRUE(Contains(r.out, " -m kernelpro_small_linear.selftest\n")) << r.out;
  const std::string readme = Slurp(out + "/README.md");
  EXPECT_TRUE(Contains(readme, "- verdict: correct (strict criterion)")) << readme;
  EXPECT_FALSE(Contains(readme, "\npip install")) << readme;
  EXPECT_TRUE(Contains(readme, "- speedup: ")) << readme;

  // A fresh venv that sees Debian's torch, pip without network, the package's own checks.
  const std::string venv = (dir / "venv").string();
  CliRun made =
      RunBinary("/usr/bin/python3", {"-m", "venv", "--system-site-packages", venv}, 5, {}, {});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  CliRun pip = RunBinary(venv + "/bin/python",
                         {"-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
                          "--disable-pip-version-check", out},
                         10, {{"MAX_JOBS", "2"}}, {});
  ASSERT_EQ(pip.exit_code, 0) << pip.out << pip.err;
  // Run from the scratch folder, so the installed package is imported, not the source folder.
  CliRun check = RunBinary("/bin/sh",
                           {"-c", "cd " + dir.string() + " && " + venv + "/bin/python -m " +
                                      "kernelpro_small_linear.selftest"},
                           5, {}, {});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_TRUE(Contains(check.out,
                       "ok    torch.ops.kernelpro.small_linear matches the reference on the "
                       "benchmark inputs (cpu, atol=0.01 rtol=0.001; served by the kernel)"))
      << check.out;
  EXPECT_TRUE(Contains(check.out,
                       "ok    a call the guards refuse (a non-contiguous input) runs "
                       "the reference and matches"))
      << check.out;
  EXPECT_TRUE(Contains(check.out, "kernelpro_small_linear: all checks passed")) << check.out;
  fs::remove_all(dir);
}

TEST(ExportCommandTest, ARunsBestKernelCarriesItsCudaSourcesAndMeasuredSpeedup) {
  const fs::path dir = Scratch("run");
  fs::copy(kRoot + "/tests/fixtures/h200-newcomer/demo-cuda", dir / "run",
           fs::copy_options::recursive);
  const std::string out = (dir / "pkg").string();
  CliRun r = RunKernelpro(
      {"export", (dir / "run").string(), "--problem", kRoot + "/problems/swish/problem.py", "--out",
       out, "--cache-dir", kCache, "--quiet", "--name", "swish_fast"},
      5);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "operator    torch.ops.kernelpro.swish_fast\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, " -m kernelpro_swish_fast.selftest\n")) << r.out;
  EXPECT_FALSE(Contains(r.out, "warning")) << r.out;  // 2.5x, its interval above 1x
  EXPECT_TRUE(Contains(r.out, "n8 of ")) << r.out;
  EXPECT_TRUE(Contains(r.out, ": correct, 2.513x [2.499, 2.524]\n")) << r.out;
  const Json meta = Json::parse(Slurp(out + "/kernelpro_swish_fast/export.json"), nullptr, false);
  ASSERT_TRUE(meta.is_object());
  EXPECT_EQ(meta["device"], "cuda");
  ASSERT_EQ(meta["extensions"].size(), 1u) << meta.dump(1);
  EXPECT_TRUE(meta["extensions"][0]["with_cuda"].get<bool>());
  const std::string ext = meta["extensions"][0]["name"];
  EXPECT_TRUE(fs::exists(out + "/csrc/" + ext + "/cuda.cu"));
  const std::string readme = Slurp(out + "/README.md");
  EXPECT_TRUE(Contains(readme, "- where: cuda: NVIDIA H200")) << readme;
  EXPECT_TRUE(Contains(readme, "the best kernel of run")) << readme;
  fs::remove_all(dir);
}

TEST(ExportCommandTest, OnlyAnIntervalWhollyAboveOneIsShownFaster) {
  auto facts = [](double low, double high) {
    return Json{{"speedup", {{"estimate", (low + high) / 2}, {"low", low}, {"high", high}}}};
  };
  EXPECT_TRUE(packaging::ShownFaster(facts(1.02, 1.10)));
  EXPECT_FALSE(packaging::ShownFaster(facts(0.98, 1.10)));  // the interval reaches 1x
  EXPECT_FALSE(packaging::ShownFaster(facts(0.12, 0.14)));  // slower
  EXPECT_FALSE(packaging::ShownFaster(Json::object()));     // never timed
}

TEST(ExportCommandTest, ANameThatIsNotAnIdentifierIsRefused) {
  CliRun r = RunKernelpro({"export", "--problem", kRoot + "/problems/swish/problem.py",
                           "--candidate", kRoot + "/problems/swish/candidates/cpu_swish.py",
                           "--out", "/tmp/kp-export-never", "--name", "My-Op"},
                          1);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "--name")) << r.err;
}

TEST(ExportCommandTest, NothingToExportIsExitOneWithTheReason) {
  const fs::path dir = Scratch("refusals");
  // A run none of whose kernels was shown faster than the reference.
  fs::copy(kRoot + "/tests/fixtures/gemma-optimize", dir / "run", fs::copy_options::recursive);
  CliRun none = RunKernelpro(
      {"export", (dir / "run").string(), "--problem", kRoot + "/problems/swish/problem.py", "--out",
       (dir / "a").string(), "--cache-dir", kCache},
      5);
  EXPECT_EQ(none.exit_code, 1) << none.out << none.err;
  EXPECT_TRUE(Contains(none.err, "the run has no best kernel")) << none.err;
  EXPECT_FALSE(fs::exists(dir / "a"));

  // An incorrect candidate is evaluated, then refused.
  const fs::path wrong = dir / "wrong.py";
  std::ofstream(wrong) << "import torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                          "    def forward(self, x):\n        return x + 1.0\n";
  CliRun bad = RunKernelpro({"export", "--device", "cpu", "--problem",
                             kRoot + "/tests/problems/tiny_swish.py", "--candidate", wrong.string(),
                             "--out", (dir / "b").string(), "--cache-dir", kCache, "--quiet"},
                            5);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_TRUE(Contains(bad.err, "is incorrect, not correct")) << bad.err;
  EXPECT_FALSE(fs::exists(dir / "b"));

  // A folder that holds no run is bad input, as the rest is: 2, not 1.
  CliRun empty = RunKernelpro({"export", dir.string(), "--out", (dir / "d").string()}, 2);
  EXPECT_EQ(empty.exit_code, 2) << empty.err;
  EXPECT_TRUE(Contains(empty.err, "is not a run directory (no run.db)")) << empty.err;

  CliRun neither = RunKernelpro({"export", "--out", (dir / "c").string()}, 2);
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_TRUE(Contains(neither.err, "give a run directory, or --problem and --candidate"))
      << neither.err;
  fs::remove_all(dir);
}

}  // namespace cli_export_command_test
}  // namespace kernelpro::cli
