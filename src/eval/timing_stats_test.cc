// The timing statistics (timing_stats.h): how timed calls are planned into interleaved rounds,
// how many the referee verifies, and how the spread between processes widens a speedup interval.
#include "eval/timing_stats.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kernelpro::eval {
namespace eval_timing_stats_test {

TEST(TimingStatsTest, TrialsAreSpreadOverRoundsOfAtLeastFiveCallsWhereTheyAllow) {
  RoundPlan plan = PlanRounds(100, 10);
  EXPECT_EQ(plan.rounds, 10);
  EXPECT_EQ(plan.calls, 10);
  // Too few trials for 10 rounds of 5: fewer rounds, but two where there are two calls.
  plan = PlanRounds(6, 10);
  EXPECT_EQ(plan.rounds, 2);
  EXPECT_EQ(plan.calls, 3);
  EXPECT_EQ(plan.planned(), 6);
  // No trials asked for still times one call.
  plan = PlanRounds(0, 10);
  EXPECT_EQ(plan.rounds, 1);
  EXPECT_EQ(plan.calls, 1);
}

TEST(TimingStatsTest, EachSideGoesFirstInEveryOtherRound) {
  std::string order;
  for (int round = 0; round < 3; ++round) {
    for (int slot = 0; slot < 2; ++slot) order += SecondSideTurn(round, slot) ? 'B' : 'A';
  }
  EXPECT_EQ(order, "ABBAAB");
  EXPECT_EQ(WarmupSeconds(0, 0), 0.5);
  EXPECT_EQ(WarmupSeconds(0, 1), 0.1);
  EXPECT_EQ(WarmupSeconds(1, 0), 0.0);
  EXPECT_EQ(WarmupCalls(0, 2), 3);
  EXPECT_EQ(WarmupCalls(1, 4), 1);
  EXPECT_EQ(WarmupCalls(1, 3), 0);
}

TEST(TimingStatsTest, AFifthOfTheCallsAreVerifiedFewerWhenTheirOutputsAreLarge) {
  const Json small = Json::parse(R"([{"shape": [1024, 1024], "dtype": "float32"}])");
  EXPECT_DOUBLE_EQ(VerifySampleProbability(Json::array(), 512ll << 20, 100), 0.2);
  EXPECT_DOUBLE_EQ(VerifySampleProbability(small, 512ll << 20, 100), 0.2);
  // 4 MiB of outputs a call and 8 MiB to verify: two calls.
  EXPECT_DOUBLE_EQ(VerifySampleProbability(small, 8ll << 20, 100), 0.02);
  // At least 8 calls: all of 6.
  EXPECT_DOUBLE_EQ(VerifySampleProbability(small, 512ll << 20, 6), 1.0);
}

TEST(TimingStatsTest, BlocksKeepEveryCallAndEachBlocksMedian) {
  InterleavedTimes times;
  times.AddBlock(false, {2, 3, 1});
  times.AddBlock(true, {1, 1, 1});
  times.AddBlock(false, {4, 5, 6});
  times.SummarizeSides();
  EXPECT_EQ(times.first.samples, (std::vector<double>{2, 3, 1, 4, 5, 6}));
  EXPECT_EQ(times.first.block_medians, (std::vector<double>{2, 5}));
  EXPECT_EQ(times.second.block_medians, (std::vector<double>{1}));
  EXPECT_EQ(times.first_blocks.size(), 2u);
  EXPECT_EQ(times.second_blocks.size(), 1u);
}

TEST(TimingStatsTest, TheSpreadBetweenProcessesOnlyWidensTheInterval) {
  RatioInterval speedup{2.0, 1.8, 2.2};
  auto spread = WidenByProcessSpread({0.9, 0.9}, 1.0, 0.5, speedup);
  ASSERT_TRUE(spread.has_value());
  EXPECT_NEAR(spread->spread, 0.1, 1e-12);  // faster in the candidate's process: still widened
  EXPECT_NEAR(spread->speedup_in_process, 1.8, 1e-12);
  EXPECT_NEAR(speedup.low, 1.8 / 1.1, 1e-12);
  EXPECT_NEAR(speedup.high, 2.2 * 1.1, 1e-12);
  EXPECT_EQ(speedup.estimate, 2.0);

  RatioInterval unchanged{2.0, 1.8, 2.2};
  EXPECT_FALSE(WidenByProcessSpread({}, 1.0, 0.5, unchanged).has_value());
  EXPECT_EQ(unchanged.low, 1.8);
  EXPECT_EQ(unchanged.high, 2.2);
}

}  // namespace eval_timing_stats_test
}  // namespace kernelpro::eval
