// `kernelpro energy` on the CPU against the fake NVML library (tests/fixtures/fake_nvml): a
// program's baseline and a CPU candidate measured in a few short windows, and the failures a
// user meets without a GPU, each one line and exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_energy_command_test {

using testing::CliRun;
using testing::RunKernelpro;

const std::string kRoot = KERNELPRO_SOURCE_DIR;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class EnergyCommandTest : public ::testing::Test {
 protected:
  std::vector<std::string> Args() const {
    const std::string dir = kRoot + "/tests/problems/program_scaled_add";
    return {"energy",
            "--device",
            "cpu",
            "--problem",
            dir + "/problem.py",
            "--candidate",
            dir + "/candidates/cpu_scaled_add.py",
            "--cache-dir",
            cache_,
            "--windows",
            "3",
            "--window-s",
            "0.2",
            "--idle-windows",
            "2",
            "--warmup-cap-s",
            "0.5",
            "--quiet",
            "--pass-env",
            "FAKE_NVML_ENERGY_ERROR",
            "--pass-env",
            "FAKE_NVML_INIT_ERROR"};
  }
  std::map<std::string, std::string> Env(std::map<std::string, std::string> extra = {}) const {
    extra["KERNELPRO_NVML_LIBRARY"] = KERNELPRO_FAKE_NVML;
    return extra;
  }
  // The cache every test of this build tree shares: the candidate is compiled once, not per test.
  std::string cache_ = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";
};

TEST_F(EnergyCommandTest, MeasuresTheBaselineAndTheCandidateWithTheMethodLine) {
  CliRun text = RunKernelpro(Args(), 10, Env());
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_TRUE(Contains(text.out, "device      Fake NVML GPU (NVML)\n")) << text.out;
  EXPECT_TRUE(
      Contains(text.out, "method      NVML total energy counter, 3 windows of 0.2 s, idle "))
      << text.out;
  EXPECT_TRUE(Contains(text.out, "clocks as found: SM 1980 MHz, MEM 3201 MHz, power limit 700 W"));
  EXPECT_TRUE(Contains(text.out, "\nreference   the problem's baseline\nenergy      "));
  EXPECT_TRUE(Contains(text.out, "\ncandidate   cpu_scaled_add.py\nenergy      "));
  EXPECT_TRUE(Contains(text.out, "\nratio       "));

  std::vector<std::string> json_args = Args();
  json_args.push_back("--json");
  CliRun json = RunKernelpro(json_args, 10, Env());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ASSERT_EQ(json.json["arms"].size(), 2u) << json.out;
  EXPECT_EQ(json.json["windows"], 3);
  EXPECT_EQ(json.json["clocks_before"]["sm_mhz"], 1980);
  EXPECT_TRUE(json.json["clocks_locked_sm_mhz"].is_null());
  EXPECT_EQ(json.json["arms"][1]["windows_mj_per_call"].size(), 3u);
  EXPECT_TRUE(json.json["arms"][1].contains("reference_over_candidate"));
  EXPECT_GT(json.json["idle_watts"].get<double>(), 0);
}

TEST_F(EnergyCommandTest, ADeviceWithoutAnEnergyCounterIsOneLineAndExit2) {
  CliRun run = RunKernelpro(Args(), 10, Env({{"FAKE_NVML_ENERGY_ERROR", "3"}}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "kernelpro energy: this device has no total-energy counter "
            "(nvmlDeviceGetTotalEnergyConsumption failed: NVML error 3 (Not Supported))\n");
}

TEST_F(EnergyCommandTest, AnNvmlErrorIsNamed) {
  CliRun run = RunKernelpro(Args(), 10, Env({{"FAKE_NVML_INIT_ERROR", "9"}}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "kernelpro energy: nvmlInit_v2 failed: NVML error 9 (Driver Not Loaded)\n");
}

TEST_F(EnergyCommandTest, ALibraryThatIsNotNvmlIsRefused) {
  CliRun run = RunKernelpro(Args(), 10, {{"KERNELPRO_NVML_LIBRARY", KERNELPRO_EXAMPLE_PLUGIN}});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(Contains(run.err, "is not an NVML library (it has no nvmlInit_v2")) << run.err;
}

}  // namespace cli_energy_command_test
}  // namespace kernelpro::cli
