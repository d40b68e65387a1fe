#include "cli/timing_selftest.h"

#include <gtest/gtest.h>

namespace kernelpro::cli {
namespace cli_timing_selftest_test {

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
                 {"profiler_us", 1.25},
                 {"device_us", 1.25},
                 {"plain_device_us", 1.20},
                 {"plain_us", 1.20},
                 {"plain_gated_us", 1.24},
                 {"gate_held", true},
                 {"passed", true}},
                {{"check", "span"},
                 {"case", "2x+1, relu 2^10"},
                 {"kernels", 3},
                 {"timer_us", 5.89},
                 {"profiler_us", 5.89},
                 {"device_us", 3.58},
                 {"plain_device_us", 3.63},
                 {"plain_gated_us", 5.84},
                 {"plain_us", 25.07},
                 {"gate_held", true},
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
  EXPECT_NE(text.find("pass  span  relu 2^10 (1 kernel): timer 1.25 us, the same calls read apart "
                      "1.25 us (diff +0.00 us, allowed max(0.5 us, 3 %) = 0.50 us); device work "
                      "1.25 us, a plain loop's 1.20 us (diff +0.05 us, allowed max(1 us, 3 %) = "
                      "1.00 us); a plain loop's gated span 1.24 us (diff +0.01 us, allowed "
                      "max(0.5 us, 3 %) = 0.50 us); ungated 1.20 us\n"),
            std::string::npos)
      << text;
  // The H100's numbers (2026-12-06): gated, three kernels read as their work and the device's
  // own gaps; ungated, the host's launch gaps quadruple it.
  EXPECT_NE(text.find("(3 kernels): timer 5.89 us, the same calls read apart 5.89 us (diff +0.00 "
                      "us, allowed max(0.5 us, 3 %) = 0.50 us); device work 3.58 us, a plain "
                      "loop's 3.63 us (diff -0.05 us, allowed max(1 us, 3 %) = 1.00 us); a plain "
                      "loop's gated span 5.84 us (diff +0.05 us, allowed max(0.5 us, 3 %) = 0.50 "
                      "us); ungated 25.07 us\n"),
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

TEST(TimingSelftestTest, APlainLoopsUngatedHostTimeIsExplainedNotJudged) {
  const std::string text = RenderTimingSelftest(Result(true));
  EXPECT_NE(text.find("note: ungated, calls of several kernels launched one by one from Python "
                      "read up to +19.18 us longer"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("3 of 3 checks passed"), std::string::npos) << text;
  EXPECT_EQ(TimingSelftestExitCode(Result(true)), 0);

  Json close = Result(true);
  close["checks"][1]["plain_us"] = 6.5;  // within a microsecond: nothing to explain
  EXPECT_EQ(RenderTimingSelftest(close).find("note:"), std::string::npos);
}

TEST(TimingSelftestTest, AGateThatDidNotHoldFailsTheCheckAndSaysWhy) {
  Json result = Result(true);
  result["checks"][1]["gate_held"] = false;
  result["checks"][1]["gate_note"] =
      "the gate did not hold at 400 us: 3 call(s) were still "
      "launching when the gate ended";
  result["checks"][1]["passed"] = false;
  const std::string text = RenderTimingSelftest(result);
  EXPECT_NE(text.find("ungated 25.07 us; the gate did not hold: the gate did not hold at 400 us: "
                      "3 call(s) were still launching when the gate ended\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("FAIL  span  2x+1, relu 2^10"), std::string::npos) << text;
  EXPECT_EQ(TimingSelftestExitCode(result), 1);
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

}  // namespace cli_timing_selftest_test
}  // namespace kernelpro::cli
