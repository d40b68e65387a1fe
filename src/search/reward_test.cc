// The reward tiers of paper §3.3.3 and the energy-aware variant of DESIGN §6.
#include "search/reward.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kernelpro::search {
namespace {

TEST(RewardTest, CorrectCandidatesScoreTheLogOfTheirSpeedup) {
  EXPECT_DOUBLE_EQ(Reward(eval::EvalStatus::kCorrect, 1.0), 0.0);
  EXPECT_NEAR(Reward(eval::EvalStatus::kCorrect, 2.0), 0.693147, 1e-6);
  EXPECT_NEAR(Reward(eval::EvalStatus::kCorrect, 0.5), -0.693147, 1e-6);
  EXPECT_NEAR(Reward(eval::EvalStatus::kCorrect, 100.0), 4.605170, 1e-6);
}

TEST(RewardTest, FailuresScoreByTier) {
  EXPECT_EQ(Reward(eval::EvalStatus::kIncorrect, std::nullopt), -2.0);
  EXPECT_EQ(Reward(eval::EvalStatus::kIncorrect, 5.0), -2.0);  // a fast wrong kernel is still wrong
  EXPECT_EQ(Reward(eval::EvalStatus::kCompileError, std::nullopt), -3.0);
  EXPECT_EQ(Reward(eval::EvalStatus::kRuntimeError, std::nullopt), -3.0);  // a crash
  EXPECT_EQ(Reward(eval::EvalStatus::kTimeout, 3.0), -3.0);                // a hang is a crash too
  // A slow correct kernel still beats a wrong one, and a wrong one beats a crash.
  EXPECT_GT(Reward(eval::EvalStatus::kCorrect, 0.2),
            Reward(eval::EvalStatus::kIncorrect, std::nullopt));
}

TEST(RewardTest, ACorrectCandidateWithoutAUsableSpeedupScoresZero) {
  EXPECT_EQ(Reward(eval::EvalStatus::kCorrect, std::nullopt), 0.0);
  EXPECT_EQ(Reward(eval::EvalStatus::kCorrect, 0.0), 0.0);
  EXPECT_EQ(Reward(eval::EvalStatus::kCorrect, -1.0), 0.0);
  EXPECT_EQ(Reward(eval::EvalStatus::kCorrect, std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(Reward(eval::EvalStatus::kCorrect, std::nan("")), 0.0);
}

TEST(RewardTest, EnergyBreaksTiesBetweenEquallyFastKernelsOnly) {
  EXPECT_NEAR(EnergyAwareReward(eval::EvalStatus::kCorrect, 2.0, 2.0),
              std::log(2.0) + 1e-3 * std::log(2.0), 1e-12);
  EXPECT_EQ(EnergyAwareReward(eval::EvalStatus::kCorrect, 2.0, std::nullopt),
            Reward(eval::EvalStatus::kCorrect, 2.0));
  // Equal speed: the more frugal kernel wins.
  EXPECT_GT(EnergyAwareReward(eval::EvalStatus::kCorrect, 1.5, 1.2),
            EnergyAwareReward(eval::EvalStatus::kCorrect, 1.5, 0.9));
  // 1% faster beats ten times the energy saving (lexicographic).
  EXPECT_GT(EnergyAwareReward(eval::EvalStatus::kCorrect, 1.01, 0.1),
            EnergyAwareReward(eval::EvalStatus::kCorrect, 1.00, 10.0));
  // Failure tiers ignore energy.
  EXPECT_EQ(EnergyAwareReward(eval::EvalStatus::kIncorrect, std::nullopt, 10.0), -2.0);
  EXPECT_EQ(EnergyAwareReward(eval::EvalStatus::kCompileError, std::nullopt, 10.0), -3.0);
}

}  // namespace
}  // namespace kernelpro::search
