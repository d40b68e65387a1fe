// A task's costs (suite/task_costs.h) from verdicts shaped as `kernelpro eval --json` writes them:
// the peak is the two processes' largest step peaks added, the worst candidate's; a task without
// figures has none, whatever is missing.
#include "suite/task_costs.h"

#include <gtest/gtest.h>

namespace kernelpro::suite {
namespace suite_task_costs_test {

constexpr long long kGiB = 1LL << 30;

Json Verdict(long long referee, long long candidate, long long min_free, double total_s) {
  return {
      {"status", "correct"},
      {"phase_seconds", {{"build", 3.1}, {"reference", 8.2}, {"total", total_s}}},
      {"peak_device_bytes",
       {{"referee", {{"reference", referee}, {"compare", referee / 2}, {"verify", 1}}},
        {"candidate", {{"load", 2 * 1024 * 1024}, {"check", candidate / 3}, {"time", candidate}}},
        {"min_free_bytes", min_free},
        {"total_bytes", 80 * kGiB}}}};
}

TEST(SuiteTaskCostsTest, ThePeakIsBothProcessesLargestStepsTogetherForTheWorstCandidate) {
  // level1/11 on an H100: referee 18.67 GiB (verify), candidate 21.77 GiB (time).
  const auto one = TaskDevicePeak({Verdict(20044578816, 23370661888, 39989084160, 160.6)});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->bytes, 20044578816 + 23370661888);
  EXPECT_EQ(one->min_free_bytes, 39989084160);

  // Of three candidates, the second needs most; the third saw the least free memory.
  const auto three = TaskDevicePeak({Verdict(4 * kGiB, 2 * kGiB, 70 * kGiB, 10),
                                     Verdict(5 * kGiB, 9 * kGiB, 60 * kGiB, 10),
                                     Verdict(8 * kGiB, 1 * kGiB, 50 * kGiB, 10)});
  ASSERT_TRUE(three);
  EXPECT_EQ(three->bytes, 14 * kGiB);
  EXPECT_EQ(three->min_free_bytes, 50 * kGiB);
}

TEST(SuiteTaskCostsTest, MissingFiguresAreUnknownNotZero) {
  EXPECT_FALSE(TaskDevicePeak({}));
  // A CPU verdict (null), an old one (absent), one whose steps hold no numbers.
  Json cpu = Verdict(1, 1, 1, 1), old = cpu, empty = cpu;
  cpu["peak_device_bytes"] = nullptr;
  old.erase("peak_device_bytes");
  empty["peak_device_bytes"] = {{"referee", {{"reference", nullptr}}},
                                {"candidate", Json::object()}};
  EXPECT_FALSE(TaskDevicePeak({cpu, old, empty}));

  // Only the referee reported (the candidate never loaded), and no free memory was recorded.
  Json referee_only = Verdict(6 * kGiB, 0, 0, 1);
  referee_only["peak_device_bytes"].erase("candidate");
  referee_only["peak_device_bytes"].erase("min_free_bytes");
  const auto peak = TaskDevicePeak({cpu, referee_only});
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->bytes, 6 * kGiB);
  EXPECT_FALSE(peak->min_free_bytes);
}

TEST(SuiteTaskCostsTest, WallTimeIsTheResultsElseTheVerdictsSummed) {
  const std::vector<Json> verdicts = {Verdict(kGiB, kGiB, kGiB, 15.2),
                                      Verdict(kGiB, kGiB, kGiB, 4.8)};
  EXPECT_DOUBLE_EQ(*CostsOfTask({{"status", "correct"}, {"seconds", 42.0}}, verdicts).seconds, 42);
  EXPECT_DOUBLE_EQ(*CostsOfTask({{"status", "correct"}}, verdicts).seconds, 20);
  const TaskCosts none = CostsOfTask({{"status", "error"}}, {});
  EXPECT_FALSE(none.seconds);
  EXPECT_FALSE(none.peak);
  // An optimize task: its time, no memory.
  const TaskCosts optimize = CostsOfTask({{"status", "correct"}, {"seconds", 300}}, {});
  EXPECT_DOUBLE_EQ(*optimize.seconds, 300);
  EXPECT_FALSE(optimize.peak);
}

}  // namespace suite_task_costs_test
}  // namespace kernelpro::suite
