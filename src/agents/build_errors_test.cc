// TrimBuildErrors on real failure dumps: nvcc, gcc, ptxas and Python tracebacks as a programmer
// must read them to fix the candidate (tests/fixtures/prompts/README.md says where each came from).
#include "agents/build_errors.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace kernelpro::agents {
namespace agents_build_errors_test {

std::string Fixture(const std::string& name) {
  const std::string path = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/prompts/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(TrimBuildErrorsTest, TorchBuildFailureLeadsWithTheNvccError) {
  const std::string dump = Fixture("torch_build_error.txt");
  const std::string t = TrimBuildErrors(dump, 6000);
  EXPECT_EQ(
      t.rfind("/root/.cache/torch_extensions/py312_cu130/kp_fixture_bad_build/cuda.cu(22): "
              "error: identifier \"check_launch\" is undefined\n    check_launch(y);\n    ^\n",
              0),
      0u)
      << t;
  // The traceback: its exception, its last frames and the candidate's own line.
  EXPECT_TRUE(Has(t, "RuntimeError: Error building extension 'kp_fixture_bad_build'"));
  EXPECT_TRUE(Has(t, "in _run_ninja_build\n    raise RuntimeError(message) from e"));
  EXPECT_TRUE(Has(t, "File \"/tmp/bad.py\", line 29, in <module>"));
  EXPECT_FALSE(Has(t, "in load_inline")) << "a middle frame of torch's";
  EXPECT_FALSE(Has(t, "^^^^")) << "Python's underlining";
  // Noise.
  EXPECT_FALSE(Has(t, "[2/3] /opt/gcc/bin/g++"));
  EXPECT_FALSE(Has(t, "ninja: build stopped"));
  EXPECT_FALSE(Has(t, "The above exception was the direct cause"));
  EXPECT_FALSE(Has(t, "-o cuda.cuda.o")) << "nvcc's command line";
  EXPECT_FALSE(Has(t, "FAILED: "));
  EXPECT_TRUE(Has(t, "[kernelpro kept ")) << "it says how much was cut";
  EXPECT_TRUE(Has(t, "4 build-command lines"));
  EXPECT_LT(t.size(), dump.size() / 2);
}

TEST(TrimBuildErrorsTest, NvccTemplateErrorsKeepTheirInstantiationButNoWarnings) {
  const std::string t = TrimBuildErrors(Fixture("nvcc_template_errors.txt"), 6000);
  EXPECT_EQ(t.rfind("scale.cu(8): error: no operator \"*\" matches these operands\n"
                    "            operand types are: const __half * float\n",
                    0),
            0u)
      << t;
  EXPECT_TRUE(Has(t, "scale.cu(14): error: no operator \"+\" matches these operands"));
  EXPECT_TRUE(Has(t,
                  "detected during instantiation of \"void scale_kernel(const T *, T *, int, "
                  "float) [with T=__half]\" at line 18"));
  EXPECT_TRUE(Has(t, "[with T=__half]\" at line 19"));
  EXPECT_FALSE(Has(t, "warning #177-D"));
  EXPECT_FALSE(Has(t, "Remark: The warnings can be suppressed"));
  EXPECT_FALSE(Has(t, "note #3328-D")) << "candidate-operator notes are noise";
  EXPECT_TRUE(Has(t, "dropped 2 warning lines"));
}

TEST(TrimBuildErrorsTest, RepeatedPtxasErrorsAreCountedOnce) {
  const std::string t = TrimBuildErrors(Fixture("ptxas_wrong_target.txt"), 6000);
  for (const char* instruction : {"'wgmma.fence'", "'wgmma.commit_group'", "'wgmma.wait_group'",
                                  "'wgmma.mma_async with floating point types'"}) {
    EXPECT_EQ(Occurrences(t, std::string("Instruction ") + instruction), 1u) << instruction;
  }
  EXPECT_EQ(Occurrences(t, "[and 1 more like it]"), 4u) << t;
  EXPECT_TRUE(Has(t, "ptxas fatal   : Ptx assembly aborted due to errors"));
}

TEST(TrimBuildErrorsTest, GccIncludeChainsAndDuplicatesGoButTheInstantiationStays) {
  const std::string t = TrimBuildErrors(Fixture("gcc_include_chain.txt"), 6000);
  EXPECT_EQ(t.rfind("inc/tile_config.h:6:56: error: ", 0), 0u) << t;
  EXPECT_FALSE(Has(t, "In file included from"));
  EXPECT_FALSE(Has(t, "                 from main.cpp"));
  EXPECT_TRUE(Has(t,
                  "inc/tile_config.h: In instantiation of ‘struct TileConfig<24, 64>’:\n"
                  "inc/launch.h:4:58:   required from here\n"
                  "inc/tile_config.h:5:24: error: static assertion failed"));
  EXPECT_EQ(Occurrences(t, "error: invalid conversion from"), 1u);
  EXPECT_FALSE(Has(t, "unused variable"));
  EXPECT_FALSE(Has(t, "note: candidate"));
  EXPECT_TRUE(Has(t, "4 include-chain lines"));
}

TEST(TrimBuildErrorsTest, CudaCrashKeepsTheExceptionAndItsMessage) {
  const std::string t = TrimBuildErrors(Fixture("cuda_crash_traceback.txt"), 6000);
  EXPECT_EQ(t.rfind("Traceback (most recent call last):\n", 0), 0u) << t;
  EXPECT_TRUE(Has(t,
                  "torch.AcceleratorError: CUDA error: operation not supported on "
                  "global/shared address space\n"));
  EXPECT_TRUE(Has(t, "CUDA kernel errors might be asynchronously reported"));
  EXPECT_TRUE(Has(t, "File \"/tmp/crash.py\", line 36, in check\n    return out.sum().item()\n"));
  EXPECT_FALSE(Has(t, "^^^"));
}

TEST(TrimBuildErrorsTest, CorrectnessReportsStayAsTheyAre) {
  const std::string report =
      "incorrect: output 0: 1024 of 65536 elements (1.56%) outside atol=0.01, rtol=0.001; max "
      "abs diff 0.31 at [3, 17]\n";
  EXPECT_EQ(TrimBuildErrors(report, 6000), report);
  const std::string cut = TrimBuildErrors(std::string(100, 'x') + "\n" + report, 80);
  EXPECT_LE(cut.size(), 80u);
  EXPECT_TRUE(Has(cut, "more characters cut]")) << cut;
}

TEST(TrimBuildErrorsTest, NeverExceedsItsBoundAndKeepsTheFirstErrorFirst) {
  const std::string dump = Fixture("torch_build_error.txt") + Fixture("nvcc_template_errors.txt") +
                           Fixture("gcc_include_chain.txt");
  for (size_t bound : {4000u, 800u, 300u, 60u, 5u}) {
    const std::string t = TrimBuildErrors(dump, bound);
    EXPECT_LE(t.size(), bound) << bound;
    if (bound >= 300) {
      EXPECT_EQ(
          t.rfind("/root/.cache/torch_extensions/py312_cu130/kp_fixture_bad_build/cuda.cu(22)", 0),
          0u)
          << bound << ":\n"
          << t;
    }
  }
}

}  // namespace agents_build_errors_test
}  // namespace kernelpro::agents
