#include "eval/energy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace kernelpro::eval {
namespace eval_energy_test {

TEST(MedianWithIntervalTest, ThirtyWindowsTakeTheTenthAndTwentyFirstValues) {
  std::vector<double> values;
  for (int i = 30; i >= 1; --i) values.push_back(i);  // unsorted on purpose
  MedianInterval m = MedianWithInterval(values);
  EXPECT_DOUBLE_EQ(m.median, 15.5);
  EXPECT_DOUBLE_EQ(m.low, 10);
  EXPECT_DOUBLE_EQ(m.high, 21);
  EXPECT_NEAR(m.confidence, 0.957, 0.001);
}

TEST(MedianWithIntervalTest, TooFewWindowsGiveTheRangeAndSayWhatItCovers) {
  MedianInterval m = MedianWithInterval({3, 1, 2});
  EXPECT_DOUBLE_EQ(m.low, 1);
  EXPECT_DOUBLE_EQ(m.high, 3);
  EXPECT_DOUBLE_EQ(m.confidence, 0.75);
}

Json Window(double mj_per_call) {
  return {{"mj_per_call", mj_per_call}, {"watts", 300.0}, {"calls", 100}};
}

TEST(EnergyReportTest, MediansRatiosAndTheMethodLine) {
  Json step = {
      {"status", "ok"},
      {"window_s", 2.0},
      {"windows", 3},
      {"idle", {{"watts", 61.2}}},
      {"before",
       {{"sm_mhz", 1980}, {"mem_mhz", 3201}, {"power_limit_w", 700.0}, {"temperature_c", 34}}},
      {"after",
       {{"sm_mhz", 1980}, {"mem_mhz", 3201}, {"power_limit_w", 700.0}, {"temperature_c", 41}}},
      {"clocks_locked_sm_mhz", nullptr},
      {"device", {{"name", "NVIDIA H200"}}},
      {"arms",
       {{{"name", "reference"},
         {"label", "reference"},
         {"warmup", {{"settled", true}, {"seconds", 3.0}}},
         {"windows", {Window(4), Window(4.2), Window(3.8)}}},
        {{"name", "candidate1"},
         {"label", "/x/a.py"},
         {"warmup", {{"settled", false}, {"seconds", 30.0}}},
         {"windows", {Window(2), Window(2.1), Window(1.9)}}}}}};
  auto report = EnergyReportFromStep(step);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->arms.size(), 2u);
  EXPECT_DOUBLE_EQ(report->arms[0].per_call.median, 4);
  EXPECT_EQ(report->arms[0].calls, 300);
  EXPECT_FALSE(report->arms[1].warmup_settled);
  ASSERT_EQ(report->ratios.size(), 1u);
  EXPECT_DOUBLE_EQ(report->ratios[0].estimate, 2);
  EXPECT_EQ(report->method,
            "NVML total energy counter, 3 windows of 2.0 s, idle 61.2 W subtracted, clocks as "
            "found: SM 1980 MHz, MEM 3201 MHz, power limit 700 W, 34\u219241 \u00b0C");
  step["clocks_locked_sm_mhz"] = 1755;
  EXPECT_NE(EnergyReportFromStep(step)->method.find(
                "idle 61.2 W subtracted, SM clock locked at 1755 MHz (--lock-clocks): SM 1980 MHz"),
            std::string::npos);
}

TEST(EnergyReportTest, AResultWithoutArmsIsAnError) {
  EXPECT_FALSE(EnergyReportFromStep(Json{{"status", "ok"}}).ok());
}

// The NVML step of `optimize --energy aware` on the H200 (tests/fixtures/h200-energy): the
// reference and the run's three kernels, 30 windows of 2 s each, read as the report reads them.
TEST(EnergyReportTest, TheH200MatchedPairFromARecordedRun) {
  std::ifstream in(std::string(KERNELPRO_SOURCE_DIR) +
                   "/tests/fixtures/h200-energy/optimize-energy-step.json");
  std::stringstream text;
  text << in.rdbuf();
  const Json payload = Json::parse(text.str());
  auto report = EnergyReportFromStep(payload["step"]);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->arms.size(), 4u);  // the reference, n2 (fast), n1 (IEEE), n3
  EXPECT_EQ(report->device, "NVIDIA H200");
  EXPECT_NE(report->method.find("30 windows of 2.0 s, idle 138.6 W subtracted, clocks as found: "
                                "SM 1980 MHz, MEM 3201 MHz, power limit 700 W"),
            std::string::npos)
      << report->method;
  const MedianInterval& fast = report->arms[1].per_call;
  const MedianInterval& ieee = report->arms[2].per_call;
  EXPECT_NEAR(fast.median, 18.68, 0.01);
  EXPECT_NEAR(ieee.median, 20.69, 0.01);
  EXPECT_NEAR(fast.confidence, 0.957, 0.001);
  EXPECT_LT(fast.high, ieee.low) << "the fast-intrinsic kernel spends less beyond the noise";
  EXPECT_NEAR(report->ratios[0].estimate, 46.84 / 18.68, 0.01);
}

}  // namespace eval_energy_test
}  // namespace kernelpro::eval
