// `kernelpro report` on a real run: the H200 demo run of tests/fixtures/h200-optimize/demo-cuda,
// rendered again from its run store with today's report code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_report_command_test {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

class ReportCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A copy: opening a store writes its WAL files beside it.
    dir_ = fs::temp_directory_path() / ("kp_report_cmd_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    const fs::path fixture =
        fs::path(KERNELPRO_SOURCE_DIR) / "tests/fixtures/h200-optimize/demo-cuda";
    fs::copy_file(fixture / "run.db", dir_ / "run" / "run.db");
    fs::copy_file(fixture / "best.py", dir_ / "run" / "best.py");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReportCommandTest, TheH200DemoRunRendersWithFiguresLinksAndTheBestKernel) {
  const fs::path out = dir_ / "out";
  auto run = testing::RunKernelpro({"report", (dir_ / "run").string(), "--out", out.string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "report: " + (out / "report.md").string())) << run.out;

  const std::string html = ReadFile(out / "report.html");
  const std::string md = ReadFile(out / "report.md");
  // The run as recorded: best n8 at 1.84x, on the H200.
  EXPECT_TRUE(Contains(md, "Best kernel: **n8**")) << md;
  EXPECT_TRUE(Contains(md, "**1.84x** over the reference, 95% interval [1.82, 1.86]"));
  EXPECT_TRUE(Contains(md, "Device: cuda (NVIDIA H200), driver 580.159.04")) << md;
  EXPECT_TRUE(Contains(md, "Toolchain: torch 2.11.0+cu130, CUDA 13.0"))
      << "the run's best.py kept what the store does not";
  EXPECT_TRUE(Contains(md, "Run directory: `" + (dir_ / "run").string() + "`"))
      << "the report names the run, not where it was written";
  // Three figures, the roofline with the reference and the six profiled kernels on it.
  size_t figures = 0;
  for (size_t at = html.find("<svg "); at != std::string::npos; at = html.find("<svg ", at + 1))
    ++figures;
  EXPECT_EQ(figures, 3u);
  EXPECT_TRUE(Contains(html, "Roofline of NVIDIA H200 SXM 141GB"));
  EXPECT_TRUE(Contains(html, "6 of 6 correct candidates had counters"));
  EXPECT_TRUE(Contains(html, "class=\"point reference\""));
  // Every linked candidate file is there, and best.py is shown.
  EXPECT_TRUE(Contains(html, "<a href=\"candidates/0008.py\"><code>candidates/0008.py</code></a>"));
  EXPECT_TRUE(Contains(md, "[`candidates/0002.py`](candidates/0002.py)"));
  for (int id = 1; id <= 8; ++id) {
    char name[32];
    std::snprintf(name, sizeof name, "candidates/%04d.py", id);
    EXPECT_TRUE(fs::exists(out / name)) << name;
  }
  EXPECT_TRUE(fs::exists(out / "best.py"));
  EXPECT_TRUE(Contains(html, "<h2>Best kernel</h2>"));
  EXPECT_TRUE(Contains(md, "```python\n# kernelpro: the fastest validated kernel"));
  // The compile error's excerpt opens at nvcc's error line.
  EXPECT_TRUE(
      Contains(html, "cuda.cu(9): error: identifier &quot;sigmoid_fast&quot; is undefined"));
}

// Issue 18: the H200 CUTLASS demo run (tests/fixtures/h200-cutlass-demo), rendered again: the
// programmer's five tool calls, the validator's rejection and the CUTLASS GEMM as the best kernel.
TEST_F(ReportCommandTest, TheH200CutlassRunShowsTheProgrammersToolCalls) {
  const fs::path run_dir = dir_ / "cutlass";
  fs::create_directories(run_dir);
  const fs::path fixture =
      fs::path(KERNELPRO_SOURCE_DIR) / "tests/fixtures/h200-cutlass-demo/cutlass-demo";
  fs::copy_file(fixture / "run.db", run_dir / "run.db");
  const fs::path out = dir_ / "cutlass-out";
  auto run = testing::RunKernelpro({"report", run_dir.string(), "--out", out.string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string md = ReadFile(out / "report.md");
  EXPECT_TRUE(Contains(md, "## The programmer's tool calls\n\n5 calls")) << md;
  for (const char* call :
       {"- iteration 1: `search_cutlass(path=cutlass/gemm/, regex=struct "
        "KernelTmaWarpSpecializedCooperative\\b) → 1 matching line in 1 file",
        "- iteration 1: `read_cutlass_file(end_line=140, file=cutlass/gemm/dispatch_policy.hpp, "
        "start_line=110) → cutlass/gemm/dispatch_policy.hpp lines 110-140 of 1430:`",
        "- iteration 1: `check_smem_layout(atom=GMMA::Layout_K_SW128_Atom<Element>{}, "
        "element_type=cutlass::bfloat16_t, tile_shape=Shape<_128,_64,_4>) → compiles: layout"}) {
    EXPECT_TRUE(Contains(md, call)) << call;
  }
  EXPECT_TRUE(Contains(md, "rejected before the build: CUTLASS constraints broken")) << md;
  // n1 at 0.99x [0.98, 1.27] is correct but not shown faster: the reference stays the answer
  // (search/best_rule.h), though the live run in 2026 still called n1 its best.
  EXPECT_TRUE(Contains(md,
                       "Best: the reference; no kernel was shown faster than the reference: "
                       "the fastest correct one, n1 (0.99x [0.98, 1.27])"))
      << md;
  const std::string html = ReadFile(out / "report.html");
  EXPECT_TRUE(Contains(html, "<h2>The programmer&#39;s tool calls</h2>") ||
              Contains(html, "<h2>The programmer's tool calls</h2>"));
}

TEST_F(ReportCommandTest, ADirectoryWithoutARunIsAUsageError) {
  auto run = testing::RunKernelpro({"report", (dir_ / "out-missing-run").string()});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  fs::create_directories(dir_ / "empty");
  run = testing::RunKernelpro({"report", (dir_ / "empty").string()});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_TRUE(Contains(run.err, "kernelpro report: ")) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "empty" / "run.db")) << "reading never creates a store";
}

}  // namespace cli_report_command_test
}  // namespace kernelpro::cli
