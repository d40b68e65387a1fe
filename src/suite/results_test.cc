// What a suite's tasks cost, as `suite status` and `suite report` read it back (suite/results.h):
// the time left follows the finished tasks' wall times, the slowest tasks are named with their
// peaks, and each problem's row carries its tasks' time and memory.
#include "suite/results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/json_io.h"

namespace kernelpro::suite {
namespace suite_results_test {
namespace fs = std::filesystem;

constexpr long long kGiB = 1LL << 30;

class SuiteProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_.dir());
    // Six eval tasks of one candidate each, a problem each.
    for (const char* id : {"a", "b", "c", "d", "e", "f"}) {
      manifest_.problems.push_back({id, id, 1, std::nullopt, "/problems/" + std::string(id)});
      manifest_.tasks.push_back(
          {id, manifest_.problems.size() - 1, 0, std::nullopt, {"/candidates/x.py"}});
    }
    manifest_.mode = "eval";
  }
  void TearDown() override { fs::remove_all(dir_.dir()); }
  // A finished task; `seconds` < 0 leaves "seconds" out of its result (as an old result would).
  void Finished(const std::string& id, double seconds) {
    Json result = {{"status", "correct"},
                   {"correct", true},
                   {"speedup", 1.5},
                   {"started_at", "2026-12-01T00:00:00Z"},
                   {"finished_at", "2026-12-01T00:01:00Z"}};
    if (seconds >= 0) result["seconds"] = seconds;
    ASSERT_TRUE(WriteJsonFile(dir_.result(id), result).ok());
  }
  // Its candidate's verdict: `total_s` in phase_seconds, and the two processes' peaks.
  void Verdict(const std::string& id, double total_s, long long referee, long long candidate) {
    const Json verdict = {
        {"status", "correct"},
        {"phase_seconds", {{"total", total_s}}},
        {"peak_device_bytes",
         {{"referee", {{"reference", referee}}}, {"candidate", {{"time", candidate}}}}}};
    ASSERT_TRUE(WriteJsonFile(dir_.candidate_result(id, 0), verdict).ok());
  }
  SuiteDir dir_{(fs::temp_directory_path() /
                 ("kp_suite_costs_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                    .string()};
  SuiteManifest manifest_;
};

TEST_F(SuiteProgressTest, TheTimeLeftFollowsTheFinishedTasksWallTimes) {
  // 30 s and 90 s done, four left, two at a time: 60 s x 4 / 2.
  Finished("a", 30);
  Finished("b", 90);
  SuiteProgress p = ReadProgress(dir_, manifest_, 2);
  ASSERT_TRUE(p.remaining_s);
  EXPECT_DOUBLE_EQ(*p.remaining_s, 120);

  // A slower finish moves the estimate: 90 s x 4 / 2.
  Finished("b", 150);
  p = ReadProgress(dir_, manifest_, 2);
  EXPECT_DOUBLE_EQ(*p.remaining_s, 180);

  // A result without "seconds" counts its verdicts' phase_seconds.total: 100 s x 3 / 2.
  Finished("c", -1);
  Verdict("c", 120, kGiB, kGiB);
  p = ReadProgress(dir_, manifest_, 2);
  EXPECT_DOUBLE_EQ(*p.remaining_s, 150);

  // One of unknown time is not taken as one of no time: still 100 s each, now x 2 / 2.
  Finished("d", -1);
  p = ReadProgress(dir_, manifest_, 2);
  EXPECT_DOUBLE_EQ(*p.remaining_s, 100);
  EXPECT_FALSE(p.tasks[3].costs.seconds);
}

TEST_F(SuiteProgressTest, TheSlowestFinishedTasksAreNamedWithTheirPeaks) {
  Finished("a", 30);
  Finished("b", 150);
  Verdict("b", 140, 20 * kGiB, 12 * kGiB);
  Finished("c", 120);
  Verdict("c", 110, 3 * kGiB, 2 * kGiB);
  Finished("d", -1);              // no time known: never among the slowest
  Verdict("e", 500, kGiB, kGiB);  // running or interrupted: a verdict but no result yet
  const SuiteProgress p = ReadProgress(dir_, manifest_);
  const std::vector<const TaskProgress*> slowest = SlowestTasks(p, 3);
  ASSERT_EQ(slowest.size(), 3u);
  EXPECT_EQ(slowest[0]->id, "b");
  EXPECT_EQ(slowest[1]->id, "c");
  EXPECT_EQ(slowest[2]->id, "a");
  ASSERT_TRUE(slowest[0]->costs.peak);
  EXPECT_EQ(slowest[0]->costs.peak->bytes, 32 * kGiB);
  EXPECT_FALSE(slowest[2]->costs.peak);
  EXPECT_EQ(SlowestTasks(p, 1).size(), 1u);
  EXPECT_FALSE(p.tasks[4].costs.seconds) << "an unfinished task's verdicts are not its cost";
}

TEST_F(SuiteProgressTest, EachProblemsRowCarriesItsTasksTimeAndPeak) {
  Finished("a", 30);
  Finished("b", 150);
  Verdict("b", 140, 20 * kGiB, 12 * kGiB);
  auto report = ReadSuiteReport(dir_, manifest_, "eager");
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->rows.size(), 6u);
  EXPECT_DOUBLE_EQ(*report->rows[0].seconds, 30);
  EXPECT_FALSE(report->rows[0].peak_device_bytes);
  EXPECT_DOUBLE_EQ(*report->rows[1].seconds, 150);
  EXPECT_EQ(report->rows[1].peak_device_bytes, 32 * kGiB);
  EXPECT_FALSE(report->rows[2].seconds) << "pending";
}

}  // namespace suite_results_test
}  // namespace kernelpro::suite
