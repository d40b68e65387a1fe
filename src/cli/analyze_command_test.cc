// End-to-end tests of `kernelpro analyze --device cpu --gpu H200 --no-ncu`: the worker's analyze
// step on the example problems, the hardware table and the roofline, as a user runs them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_testing.h"
#include "core/json_io.h"
#include "core/subprocess.h"

namespace kernelpro::cli {
namespace cli_analyze_command_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

using AnalyzeRun = testing::CliRun;

AnalyzeRun Analyze(std::vector<std::string> args) {
  args.insert(args.begin(),
              {"analyze", "--cache-dir", std::string(KERNELPRO_BINARY_DIR) + "/test-cache"});
  return testing::RunKernelpro(args);
}

TEST(AnalyzeCommandTest, SwishIsMemoryBoundOnH200) {
  AnalyzeRun r = Analyze({"--problem", kRoot + "/problems/swish/problem.py", "--device", "cpu",
                          "--gpu", "H200", "--no-ncu", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json& j = r.json;
  EXPECT_EQ(j["bottleneck"], "memory") << j.dump(1);
  EXPECT_EQ(j["gpu"], "h200");
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_EQ(j["min_bytes"].get<double>(), 2.0 * (1 << 24) * 4);
  EXPECT_EQ(j["flops"].get<double>(), 2.0 * (1 << 24));  // sigmoid + mul, one estimated FLOP each
  EXPECT_DOUBLE_EQ(j["roofline"]["arithmetic_intensity"].get<double>(), 0.25);
  EXPECT_EQ(j["confidence"], "theoretical");
  EXPECT_TRUE(j["measured"].is_null());
}

TEST(AnalyzeCommandTest, TrilMatmulIsComputeBoundOnH200) {
  AnalyzeRun r = Analyze({"--problem", kRoot + "/problems/tril_matmul/problem.py", "--device",
                          "cpu", "--gpu", "h200", "--no-ncu", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json& j = r.json;
  const double n = 2048;
  EXPECT_EQ(j["bottleneck"], "compute") << j.dump(1);
  EXPECT_EQ(j["dominant_category"], "gemm");
  EXPECT_EQ(j["precision"], "fp32");  // fp32 GEMM without TF32: CUDA cores, 67 TFLOP/s
  EXPECT_EQ(j["min_bytes"].get<double>(), 3 * n * n * 4);
  // 2*2048^3 for the GEMM, plus one estimated FLOP per element for tril.
  EXPECT_EQ(j["flops"].get<double>(), 2 * n * n * n + n * n);
  EXPECT_NEAR(j["roofline"]["arithmetic_intensity"].get<double>(),
              (2 * n * n * n + n * n) / (3 * n * n * 4), 1e-9);
  EXPECT_NEAR(j["roofline"]["ridge_point"].get<double>(), 67e12 / 4.8e12, 1e-9);
}

TEST(AnalyzeCommandTest, HumanSummaryAndAllowTf32) {
  AnalyzeRun r = Analyze({"--problem", kRoot + "/problems/tril_matmul/problem.py", "--device",
                          "cpu", "--gpu", "h200", "--no-ncu", "--allow-tf32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tf32 on tensor cores"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compute-bound"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm: mm x1"), std::string::npos) << r.out;
}

TEST(AnalyzeCommandTest, SavedH200ProfileOfTheReferenceValidatesTheClass) {
  AnalyzeRun r =
      Analyze({"--problem", kRoot + "/problems/tril_matmul/problem.py", "--device", "cpu", "--gpu",
               "h200", "--profile-from", kRoot + "/tests/fixtures/h200-profile/record",
               "--profile-name", "tril_matmul_reference", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json& j = r.json;
  EXPECT_EQ(j["bottleneck"], "compute") << j.dump(1);
  EXPECT_EQ(j["measured"]["class"], "compute");
  EXPECT_EQ(j["measured"]["kernel_count"], 2);
  EXPECT_EQ(j["confidence"], "high");
  // 256.5 us of roofline time against the reference's 353.4 us of kernels.
  EXPECT_NEAR(j["measured"]["fraction_of_bound"].get<double>(), 0.7257, 1e-3);
  r = Analyze({"--problem", kRoot + "/problems/tril_matmul/problem.py", "--device", "cpu", "--gpu",
               "h200", "--profile-from", kRoot + "/tests/fixtures/h200-profile/record",
               "--profile-name", "missing"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no missing.ncu.csv"), std::string::npos) << r.err;
}

TEST(AnalyzeCommandTest, CpuWithoutGpuAndUnknownGpuAreClearErrors) {
  AnalyzeRun r = Analyze({"--problem", kRoot + "/problems/swish/problem.py", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpu NAME"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("h200"), std::string::npos) << r.err;
  r = Analyze({"--problem", kRoot + "/problems/swish/problem.py", "--device", "cpu", "--gpu",
               "V100", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown GPU 'V100'"), std::string::npos) << r.err;
  EXPECT_NE(JsonGet<std::string>(r.json, "error", "").find("a100-80gb"), std::string::npos)
      << r.out;
}

}  // namespace cli_analyze_command_test
}  // namespace kernelpro::cli
