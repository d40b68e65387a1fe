#include "eval/call_facts.h"

#include <gtest/gtest.h>

#include "eval/verdict.h"

namespace kernelpro::eval {
namespace eval_call_facts_test {

Json Block(std::vector<double> host_ms, std::vector<double> launch_us) {
  return Json{{"times_ms", Json::array()}, {"host_ms", host_ms},    {"launch_us", launch_us},
              {"sm_mhz", {1980, 1965}},    {"warm_sm_mhz", 1980},   {"foreign_calls", 0},
              {"no_device_work_calls", 0}, {"low_clock_blocks", 0}, {"repeated_blocks", 0}};
}

const Finding* Find(const std::vector<Finding>& findings, const std::string& rule) {
  for (const Finding& f : findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

TEST(CallFactsTest, BlocksAddUpToMediansAndAClockRange) {
  CallFacts facts;
  facts.Add(Block({0.010, 0.012, 0.011}, {5, 6, 7}));
  Json second = Block({0.013}, {8});
  second["sm_mhz"] = {1410, 1980};
  facts.Add(second);
  EXPECT_DOUBLE_EQ(*facts.HostMedianMs(), 0.0115);
  EXPECT_DOUBLE_EQ(*facts.LaunchMedianUs(), 6.5);
  Json j = CallFactsJson(facts);
  EXPECT_EQ(j["sm_mhz"], Json::array({1410, 1980}));
  EXPECT_EQ(j["warm_sm_mhz"], 1980);
  EXPECT_TRUE(CallFactsFindings(facts, 0.050, "candidate").empty());
}

TEST(CallFactsTest, GatedBlocksGiveBusyTimeAndSayTheGateHeld) {
  CallFacts facts;
  Json block = Block({0.0180}, {22.0});
  block["busy_ms"] = {0.0035, 0.0036};
  block["gate_held"] = true;
  block["gate_runtime_late"] = 0;
  facts.Add(block);
  Json j = CallFactsJson(facts);
  EXPECT_EQ(j["gate_held"], true);
  EXPECT_EQ(j["gate_runtime_late"], 0);  // the runtime records agree: no launch after a gate
  EXPECT_DOUBLE_EQ(j["busy_ms"].get<double>(), 0.00355);
  EXPECT_EQ(Find(CallFactsFindings(facts, 0.0058, "candidate"), "gate_not_held"), nullptr);
  const std::string lines = HostAndClockLines(facts, facts);
  EXPECT_NE(lines.find("busy        reference 0.0036 ms, candidate 0.0036 ms per call with the "
                       "device's own gaps between kernels left out"),
            std::string::npos)
      << lines;
}

TEST(CallFactsTest, ABlockTheGateDidNotHoldIsSaidWithItsReason) {
  CallFacts facts;
  Json held = Block({0.01}, {20.0});
  held["gate_held"] = true;
  Json missed = Block({0.01}, {20.0});
  missed["gate_held"] = false;
  missed["gate_note"] =
      "the gate did not hold at 400 us: 5 call(s) had device work that "
      "started before the gate ended (work on a stream the gate does not hold)";
  facts.Add(held);
  facts.Add(missed);
  EXPECT_EQ(CallFactsJson(facts)["gate_held"], false);
  const auto findings = CallFactsFindings(facts, 0.1, "candidate");
  const Finding* f = Find(findings, "gate_not_held");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("candidate: 1 timing block(s) could not be gated, so the host's "
                            "launch gaps between its kernels are in its time (the gate did not "
                            "hold at 400 us: 5 call(s) had device work that started before the "
                            "gate ended"),
            std::string::npos)
      << f->message;
  // On the CPU there is no gate: nothing is said of it.
  CallFacts cpu;
  cpu.Add(Block({0.01}, {}));
  EXPECT_TRUE(CallFactsJson(cpu)["gate_held"].is_null());
  EXPECT_TRUE(CallFactsJson(cpu)["gate_runtime_late"].is_null());
}

TEST(CallFactsTest, ACallSlowerToLaunchThanToRunIsCalledHostBound) {
  CallFacts facts;
  facts.Add(Block({0.030}, {25.0}));
  auto findings = CallFactsFindings(facts, 0.0012, "reference");
  const Finding* f = Find(findings, "host_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, "warn");
  EXPECT_NE(f->message.find("reference: host-bound: the host takes 25.0 us to launch a call "
                            "(median), more than its 1.2 us of device work"),
            std::string::npos)
      << f->message;
  // The same launch time beside 100 us of device work is not host-bound.
  EXPECT_EQ(Find(CallFactsFindings(facts, 0.100, "reference"), "host_bound"), nullptr);
}

TEST(CallFactsTest, OddCallsAndLowClocksAreSaid) {
  CallFacts facts;
  Json block = Block({0.01}, {1});
  block["foreign_calls"] = 2;
  block["no_device_work_calls"] = 3;
  block["low_clock_blocks"] = 1;
  block["sm_mhz"] = {345, 1980};
  facts.Add(block);
  auto findings = CallFactsFindings(facts, 0.5, "candidate");
  ASSERT_NE(Find(findings, "foreign_work"), nullptr);
  EXPECT_NE(Find(findings, "foreign_work")->message.find("candidate: 2 timed call(s)"),
            std::string::npos);
  ASSERT_NE(Find(findings, "no_device_work"), nullptr);
  const Finding* low = Find(findings, "low_clock");
  ASSERT_NE(low, nullptr);
  EXPECT_NE(low->message.find("(1980 MHz; lowest 345 MHz)"), std::string::npos) << low->message;
}

TEST(CallFactsTest, NoClockReadIsNullWithItsReason) {
  CallFacts facts;
  Json block{{"host_ms", {0.5}}, {"clock_note", "the SM clock could not be read (no NVML)"}};
  facts.Add(block);
  Json j = CallFactsJson(facts);
  EXPECT_TRUE(j["sm_mhz"].is_null());
  EXPECT_TRUE(j["warm_sm_mhz"].is_null());
  EXPECT_EQ(j["clock_note"], "the SM clock could not be read (no NVML)");
  EXPECT_TRUE(j["launch_us"].is_null());
}

TEST(CallFactsTest, EvalShowsTheHostInclusiveTimesAndTheClockOnAGpu) {
  CallFacts reference, candidate;
  reference.Add(Block({0.0312}, {20}));
  candidate.Add(Block({0.045}, {35}));
  EXPECT_EQ(HostAndClockLines(reference, candidate),
            "host        reference 0.0312 ms, candidate 0.0450 ms per call with the host's launch "
            "and synchronisation (not the verdict's times)\n"
            "clock       SM 1965-1980 MHz before and after the timed blocks (the warm-ups reached "
            "1980 MHz; clocks as found, never set)\n");
}

TEST(CallFactsTest, OnTheCpuThereIsNoSecondTimeAndNoClock) {
  CallFacts reference, candidate;
  reference.Add(Json{{"host_ms", {1.2}}, {"launch_us", Json::array()}, {"sm_mhz", Json::array()}});
  candidate.Add(Json{{"host_ms", {0.6}}, {"launch_us", Json::array()}, {"sm_mhz", Json::array()}});
  EXPECT_EQ(HostAndClockLines(reference, candidate), "");
  candidate.clock_note = "the SM clock could not be read (no NVML library)";
  EXPECT_EQ(HostAndClockLines(reference, candidate),
            "clock       the SM clock could not be read (no NVML library)\n");
}

}  // namespace eval_call_facts_test
}  // namespace kernelpro::eval
