// The reward tiers of paper §3.3.3 and the energy-aware variant of DESIGN §6.
#include "search/reward.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kernelpro::search {
namespace search_reward_test {

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
              std::log(2.0) + kDefaultEnergyEpsilon * std::log(2.0), 1e-12);
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

// The lexicographic property (paper §5.5: "any speedup gain dominates any energy gain"): over a
// grid of speedups from 0.05x to 200x, every pair the harness can resolve (ratio at least
// kResolvableSpeedupRatio) keeps its order whatever the two energy ratios are, from a
// million-fold saving to a million-fold waste; and with equal speedups the frugal kernel wins.
TEST(RewardTest, NoEnergyGainOutweighsAResolvableSpeedup) {
  std::vector<double> speedups;
  for (double s = 0.05; s < 200; s *= 1.37) speedups.push_back(s);
  std::vector<double> energies;
  for (double e = 1e-6; e <= 1e6; e *= 3.1) energies.push_back(e);
  int pairs = 0;
  for (double slow : speedups) {
    // The slower one at exactly the resolvable ratio below, and at the grid's other points.
    for (double fast : {slow * kResolvableSpeedupRatio, slow * 1.37, slow * 10}) {
      for (double e_slow : energies) {
        for (double e_fast : energies) {
          ASSERT_GT(EnergyAwareReward(eval::EvalStatus::kCorrect, fast, e_fast),
                    EnergyAwareReward(eval::EvalStatus::kCorrect, slow, e_slow))
              << fast << "x (energy " << e_fast << ") vs " << slow << "x (energy " << e_slow << ")";
          ++pairs;
        }
      }
    }
    for (std::size_t i = 0; i + 1 < energies.size(); ++i) {
      // Equally fast: more energy saved, higher reward (up to the clamp).
      if (energies[i] < 1 / kMaxEnergyReduction || energies[i + 1] > kMaxEnergyReduction) continue;
      EXPECT_GT(EnergyAwareReward(eval::EvalStatus::kCorrect, slow, energies[i + 1]),
                EnergyAwareReward(eval::EvalStatus::kCorrect, slow, energies[i]));
    }
  }
  EXPECT_GT(pairs, 10000);
  // Energy never lifts a wrong kernel, nor sinks a correct one below it: a correct kernel at 0.2x
  // with the worst energy still outranks a wrong one with the best.
  EXPECT_GT(EnergyAwareReward(eval::EvalStatus::kCorrect, 0.2, 1e-6),
            EnergyAwareReward(eval::EvalStatus::kIncorrect, 1.0, 1e6));
}

}  // namespace search_reward_test
}  // namespace kernelpro::search
