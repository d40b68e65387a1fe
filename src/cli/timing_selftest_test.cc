#include "cli/timing_selftest.h"

#include <gtest/gtest.h>

namespace kernelpro::cli {
namespace {

Json Result(bool self_passes) {
  return Json{{"status", "ok"},
              {"device", "NVIDIA H200"},
              {"capability", "sm_90"},
              {"torch", "2.11.0+cu130"},
              {"method", "span of the call's device work"},
              {"seconds", 41.6},
              {"checks",
               {{{"check", "span"},
                 {"case", "relu 2^10"},
                 {"kernels", 1},
                 {"timer_us", 1.25},
                 {"profiler_us", 1.20},
                 {"passed", true}},
                {{"check", "span"},
                 {"case", "2x+1, relu 2^22"},
                 {"kernels", 3},
                 {"timer_us", 40.0},
                 {"profiler_us", 39.5},
                 {"passed", true}},
                {{"check", "self"},
                 {"case", "relu 2^22"},
                 {"median_us", 9.9},
                 {"ratio", self_passes ? 1.002 : 0.95},
                 {"sm_mhz", {1980, 1980}},
                 {"passed", self_passes}}}}};
}

TEST(TimingSelftestTest, EachCheckIsOneLineWithItsNumbersAndTheVerdict) {
  const std::string text = RenderTimingSelftest(Result(true));
  EXPECT_NE(text.find("timing self-test on NVIDIA H200 (sm_90), torch 2.11.0+cu130, clocks as "
                      "found\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pass  span  relu 2^10 (1 kernel): timer 1.25 us, profiler 1.20 us, diff "
                      "+0.05 us (allowed max(1 us, 3 %) = 1.00 us)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(3 kernels): timer 40.00 us, profiler 39.50 us, diff +0.50 us (allowed "
                      "max(1 us, 3 %) = 1.19 us)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pass  self  relu 2^22 (9.9 us) against itself: 1.0020x (allowed 1 +- "
                      "0.01), SM 1980-1980 MHz\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("3 of 3 checks passed in 42 s: kernelpro's times can be trusted"),
            std::string::npos)
      << text;
  EXPECT_EQ(TimingSelftestExitCode(Result(true)), 0);
}

TEST(TimingSelftestTest, AFailedCheckIsShoutedAndTheExitCodeSaysSo) {
  const std::string text = RenderTimingSelftest(Result(false));
  EXPECT_NE(text.find("FAIL  self  relu 2^22"), std::string::npos) << text;
  EXPECT_NE(text.find("2 of 3 checks passed"), std::string::npos) << text;
  EXPECT_NE(text.find("are not evidence"), std::string::npos) << text;
  EXPECT_EQ(TimingSelftestExitCode(Result(false)), 1);
  EXPECT_EQ(TimingSelftestExitCode(Json{{"checks", Json::array()}}), 1);  // nothing checked
}

TEST(TimingSelftestTest, ACheckWithoutAProfilerReadingSaysWhyAndFails) {
  Json result = Result(true);
  result["checks"][0] = Json{{"check", "span"},
                             {"case", "relu 2^10"},
                             {"kernels", 1},
                             {"timer_us", 1.25},
                             {"profiler_us", nullptr},
                             {"passed", false},
                             {"note", "the records did not come in groups of 2"}};
  const std::string text = RenderTimingSelftest(result);
  EXPECT_NE(text.find("FAIL  span  relu 2^10: timer 1.25 us, no profiler reading (the records did "
                      "not come in groups of 2)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(TimingSelftestExitCode(result), 1);
}

}  // namespace
}  // namespace kernelpro::cli
