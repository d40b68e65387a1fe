#include "report/suite_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::report {
namespace report_suite_stats_test {

ScoredProblem Solved(const std::string& key, double speedup, int level = 0) {
  return {key, level, true, speedup};
}
ScoredProblem Failed(const std::string& key, int level = 0) { return {key, level, false, 0}; }

std::vector<std::string> Labels(const GroupStats& stats) {
  std::vector<std::string> labels;
  for (const SpeedupBand& band : stats.distribution) labels.push_back(band.label);
  return labels;
}
std::vector<int> Counts(const GroupStats& stats) {
  std::vector<int> counts;
  for (const SpeedupBand& band : stats.distribution) counts.push_back(band.count);
  return counts;
}

// Five problems one can check on paper: speedups 2, 0.5, failed, 8, 1.
//   failures as 1.0x: product 2 * 0.5 * 1 * 8 * 1 = 8, geomean 8^(1/5) = 2^(3/5)
//   correct only:     product 8 over 4 problems, geomean 8^(1/4) = 2^(3/4)
//   fast_p (strict >, over all 5): p=0 -> 4/5, 0.5 -> 3/5 (0.5 itself is not faster),
//     0.8 -> 3/5, 1.0 -> 2/5 (1.0 itself is not faster), 1.5 -> 2/5, 2.0 -> 1/5
//   median of 0.5, 1, 1, 2, 8 = 1
//   cap 2: 2 * 0.5 * 1 * 2 * 1 = 2 -> 2^(1/5); cap 5: 5^(1/5); caps >= 10 leave 8 alone
std::vector<ScoredProblem> FiveProblems() {
  return {Solved("a", 2.0), Solved("b", 0.5), Failed("c"), Solved("d", 8.0), Solved("e", 1.0)};
}

TEST(SuiteStatsTest, GroupOfFiveMatchesTheHandComputedValues) {
  GroupStats stats = SummarizeGroup(FiveProblems());
  EXPECT_EQ(stats.n, 5);
  EXPECT_EQ(stats.correct, 4);
  EXPECT_DOUBLE_EQ(stats.correct_rate, 0.8);
  ASSERT_EQ(stats.fast_p.size(), kFastPThresholds.size());
  const std::vector<double> fast_p = {0.8, 0.6, 0.6, 0.4, 0.4, 0.2};
  for (std::size_t i = 0; i < fast_p.size(); ++i) {
    EXPECT_DOUBLE_EQ(stats.fast_p[i], fast_p[i]) << "fast_" << kFastPThresholds[i].second;
  }
  EXPECT_DOUBLE_EQ(stats.fast_p[0], stats.correct_rate) << "fast_0 is the correct rate";
  EXPECT_NEAR(stats.geomean_speedup, std::pow(2.0, 0.6), 1e-12);
  ASSERT_TRUE(stats.geomean_speedup_correct_only.has_value());
  EXPECT_NEAR(*stats.geomean_speedup_correct_only, std::pow(2.0, 0.75), 1e-12);
  EXPECT_DOUBLE_EQ(stats.median_speedup, 1.0);
  EXPECT_EQ(stats.min_speedup, 0.5);
  EXPECT_EQ(stats.max_speedup, 8.0);
  ASSERT_EQ(stats.capped_geomean.size(), kCaps.size());
  EXPECT_NEAR(stats.capped_geomean[0], std::pow(2.0, 0.2), 1e-12);  // cap 2
  EXPECT_NEAR(stats.capped_geomean[1], std::pow(5.0, 0.2), 1e-12);  // cap 5
  for (std::size_t i = 2; i < kCaps.size(); ++i) {
    EXPECT_NEAR(stats.capped_geomean[i], stats.geomean_speedup, 1e-12) << "cap " << kCaps[i];
  }
}

TEST(SuiteStatsTest, DistributionHasEveryBandAndPutsEdgesInTheUpperBand) {
  GroupStats stats = SummarizeGroup(FiveProblems());
  EXPECT_EQ(Labels(stats),
            (std::vector<std::string>{"failed", "< 0.5x", "0.5-0.8x", "0.8-1x", "1-1.5x", "1.5-2x",
                                      "2-5x", "5-10x", ">= 10x"}));
  // c failed; 0.5 -> 0.5-0.8x, 1.0 -> 1-1.5x, 2.0 -> 2-5x, 8 -> 5-10x.
  EXPECT_EQ(Counts(stats), (std::vector<int>{1, 0, 1, 0, 1, 0, 1, 1, 0}));

  GroupStats extremes = SummarizeGroup({Solved("x", 0.499), Solved("y", 10.0), Solved("z", 0.8)});
  EXPECT_EQ(Counts(extremes), (std::vector<int>{0, 1, 0, 1, 0, 0, 0, 0, 1}));
}

TEST(SuiteStatsTest, EmptyGroupHasNeutralValues) {
  GroupStats stats = SummarizeGroup({});
  EXPECT_EQ(stats.n, 0);
  EXPECT_EQ(stats.correct_rate, 0);
  EXPECT_EQ(stats.fast_p, std::vector<double>(kFastPThresholds.size(), 0.0));
  EXPECT_EQ(stats.geomean_speedup, 1);
  EXPECT_FALSE(stats.geomean_speedup_correct_only.has_value());
  EXPECT_EQ(stats.median_speedup, 1);
  EXPECT_FALSE(stats.min_speedup.has_value());
  EXPECT_EQ(stats.capped_geomean, std::vector<double>(kCaps.size(), 1.0));
  EXPECT_EQ(Counts(stats), std::vector<int>(9, 0));
}

TEST(SuiteStatsTest, AllFailedHasNoCorrectOnlyGeomeanAndOneX) {
  GroupStats stats = SummarizeGroup({Failed("a"), Failed("b")});
  EXPECT_EQ(stats.correct, 0);
  EXPECT_EQ(stats.geomean_speedup, 1);
  EXPECT_FALSE(stats.geomean_speedup_correct_only.has_value());
  EXPECT_FALSE(stats.max_speedup.has_value());
  EXPECT_EQ(stats.distribution[0].count, 2);
}

TEST(SuiteStatsTest, CorrectWithoutAMeasurableSpeedupCountsAsFailed) {
  GroupStats stats = SummarizeGroup({Solved("zero", 0.0), Solved("nan", std::nan("")),
                                     Solved("inf", INFINITY), Solved("ok", 4.0)});
  EXPECT_EQ(stats.correct, 1);
  EXPECT_NEAR(stats.geomean_speedup, std::pow(4.0, 0.25), 1e-12);
  EXPECT_EQ(stats.geomean_speedup_correct_only, 4.0);
  EXPECT_EQ(stats.distribution[0].count, 3);
}

TEST(SuiteStatsTest, ScoreIsSpeedupOrOneThenCapped) {
  EXPECT_EQ(Score(Solved("a", 30.0)), 30.0);
  EXPECT_EQ(Score(Solved("a", 30.0), 10.0), 10.0);
  EXPECT_EQ(Score(Solved("a", 0.3), 10.0), 0.3);
  EXPECT_EQ(Score(Failed("a")), 1.0);
  EXPECT_EQ(Score(Failed("a"), 2.0), 1.0);
}

TEST(SuiteStatsTest, SuiteSplitsByLevelAndKeepsUnlevelledProblemsOverallOnly) {
  SuiteStats stats =
      SummarizeSuite({Solved("l1/a", 2.0, 1), Failed("l1/b", 1), Solved("l2/a", 3.0, 2),
                      Failed("l2/b", 2), Solved("flat", 9.0, 0)});
  EXPECT_EQ(stats.overall.n, 5);
  ASSERT_EQ(stats.levels.size(), 2u);
  EXPECT_EQ(stats.levels.at(1).n, 2);
  EXPECT_DOUBLE_EQ(stats.levels.at(1).correct_rate, 0.5);
  EXPECT_NEAR(stats.levels.at(1).geomean_speedup, std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(stats.levels.at(2).median_speedup, 2.0) << "median of 1 and 3";
  EXPECT_EQ(stats.levels.count(0), 0u);
}

// ---- Wilcoxon signed-rank ----

TEST(WilcoxonTest, NoDifferencesOrOnlyZerosGivePOne) {
  WilcoxonResult empty = WilcoxonSignedRank({});
  EXPECT_EQ(empty.n, 0);
  EXPECT_EQ(empty.p_value, 1);
  WilcoxonResult zeros = WilcoxonSignedRank({0.0, 0.0});
  EXPECT_EQ(zeros.pairs, 2);
  EXPECT_EQ(zeros.zeros, 2);
  EXPECT_EQ(zeros.n, 0);
  EXPECT_EQ(zeros.p_value, 1);
}

TEST(WilcoxonTest, LogRatiosEqualButForRoundingShareARank) {
  // ln 3 - ln 1.5 and ln 2 differ in the last bit; as speedup ratios they are both 2x.
  const double rounded = std::log(3.0) - std::log(1.5);
  ASSERT_NE(rounded, std::log(2.0)) << "the case needs two doubles that differ";
  WilcoxonResult with_rounding = WilcoxonSignedRank({rounded, -std::log(2.0), 0.1});
  WilcoxonResult exact_tie = WilcoxonSignedRank({std::log(2.0), -std::log(2.0), 0.1});
  EXPECT_EQ(with_rounding.statistic, 1 + 2.5);
  EXPECT_EQ(with_rounding.statistic, exact_tie.statistic);
  EXPECT_EQ(with_rounding.p_value, exact_tie.p_value);
  // Ranks 1, 2.5, 2.5 (sum 6); W+ >= 3.5 for {1, 2.5}, {1, 2.5'}, {2.5, 2.5'}, all: p = 4/8.
  EXPECT_DOUBLE_EQ(exact_tie.p_value, 0.5);
}

TEST(WilcoxonTest, DifferencesApartByMoreThanTheToleranceDoNotTie) {
  WilcoxonResult result = WilcoxonSignedRank({1.0, -(1.0 + 1e-6)});
  EXPECT_EQ(result.statistic, 1) << "ranks 1 (+) and 2 (-); a tie would give 1.5";
}

// Reference values from scipy.stats.wilcoxon and from brute-force enumeration; how each was
// made is in the generator script and in each case's "source".
TEST(WilcoxonTest, MatchesTheReferenceGolden) {
  const std::string path =
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/suite_stats/wilcoxon_golden.json";
  Result<Json> golden = ReadJsonFile(path);
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  const Json& cases = golden->at("cases");
  ASSERT_GE(cases.size(), 10u);
  int exact_cases = 0, approx_cases = 0;
  for (const Json& expected : cases) {
    const std::string name = expected.at("name");
    SCOPED_TRACE(name + " (" + expected.at("source").get<std::string>() + ")");
    WilcoxonResult result =
        WilcoxonSignedRank(expected.at("differences").get<std::vector<double>>());
    EXPECT_EQ(result.pairs, expected.at("pairs").get<int>());
    EXPECT_EQ(result.zeros, expected.at("zeros").get<int>());
    EXPECT_EQ(result.n, expected.at("n").get<int>());
    EXPECT_EQ(result.exact, expected.at("exact").get<bool>());
    EXPECT_DOUBLE_EQ(result.statistic, expected.at("statistic").get<double>());
    const double p = expected.at("p_value");
    const double tolerance = result.exact ? 1e-9 : 1e-6;
    EXPECT_NEAR(result.p_value, p, tolerance * p) << "p-value";
    if (expected.contains("z")) {
      ASSERT_TRUE(result.z.has_value());
      EXPECT_NEAR(*result.z, expected.at("z").get<double>(), 1e-9);
      ++approx_cases;
    } else {
      EXPECT_FALSE(result.z.has_value());
      if (result.n > 0) ++exact_cases;
    }
  }
  EXPECT_GE(exact_cases, 5);
  EXPECT_GE(approx_cases, 3);
}

// ---- CompareSuites ----

// Four shared problems, one only in each suite; b lists them in another order.
//   k1: 2 vs 1 -> ln 2 (a wins)     k2: failed vs failed -> 0 (tie)
//   k3: 4 vs 8 -> -ln 2 (b wins)    k4: 30 vs 50 -> ln 0.6 (b wins)
// Wilcoxon: the zero dropped, n = 3, |d| ranks 0.51 -> 1 (-), ln 2 twice -> 2.5 (+), 2.5 (-):
// W+ = 2.5; of the 8 sign assignments, sums 0, 1, 2.5, 2.5, 3.5, 3.5, 5, 6: six are >= 2.5.
std::vector<ScoredProblem> SuiteA() {
  return {Solved("k1", 2.0, 1), Failed("k2", 1), Solved("k3", 4.0, 2), Solved("k4", 30.0, 2),
          Solved("ka", 1.2, 1)};
}
std::vector<ScoredProblem> SuiteB() {
  return {Solved("k3", 8.0, 2), Solved("kb", 3.0, 1), Solved("k1", 1.0, 1), Failed("k2", 1),
          Solved("k4", 50.0, 2)};
}

TEST(CompareSuitesTest, PairsByKeyAndCountsWinsLossesAndTies) {
  Comparison comparison = CompareSuites(SuiteA(), SuiteB());
  ASSERT_EQ(comparison.pairs.size(), 4u);
  std::vector<std::string> keys;
  for (const PairedProblem& pair : comparison.pairs) keys.push_back(pair.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"k1", "k2", "k3", "k4"})) << "the first suite's order";
  EXPECT_EQ(comparison.only_in_a, std::vector<std::string>{"ka"});
  EXPECT_EQ(comparison.only_in_b, std::vector<std::string>{"kb"});
  EXPECT_EQ(comparison.pairs[1].a, 1.0);
  EXPECT_FALSE(comparison.pairs[1].a_correct);
  EXPECT_EQ(comparison.pairs[2].b, 8.0);
  EXPECT_EQ(comparison.pairs[2].level, 2);
  EXPECT_NEAR(comparison.pairs[0].log_ratio, std::log(2.0), 1e-15);
  EXPECT_EQ(comparison.a_wins, 1);
  EXPECT_EQ(comparison.b_wins, 2);
  EXPECT_EQ(comparison.ties, 1);
  EXPECT_NEAR(comparison.geomean_ratio, std::pow(0.6, 0.25), 1e-12) << "(2 * 1 * 0.5 * 0.6)^(1/4)";
  EXPECT_FALSE(comparison.cap.has_value());
  EXPECT_EQ(comparison.wilcoxon.pairs, 4);
  EXPECT_EQ(comparison.wilcoxon.zeros, 1);
  EXPECT_EQ(comparison.wilcoxon.n, 3);
  EXPECT_EQ(comparison.wilcoxon.statistic, 2.5);
  EXPECT_TRUE(comparison.wilcoxon.exact);
  EXPECT_DOUBLE_EQ(comparison.wilcoxon.p_value, 0.75);
}

TEST(CompareSuitesTest, CapMakesBothOutliersEqual) {
  // At cap 10, k4 is 10 vs 10: a second tie. Left: ln 2, -ln 2 (ranks 1.5 each), W+ = 1.5,
  // sums 0, 1.5, 1.5, 3: p = 3/4.
  Comparison comparison = CompareSuites(SuiteA(), SuiteB(), 10.0);
  EXPECT_EQ(comparison.cap, 10.0);
  EXPECT_EQ(comparison.pairs[3].a, 10.0);
  EXPECT_EQ(comparison.pairs[3].b, 10.0);
  EXPECT_TRUE(comparison.pairs[3].a_correct);
  EXPECT_EQ(comparison.a_wins, 1);
  EXPECT_EQ(comparison.b_wins, 1);
  EXPECT_EQ(comparison.ties, 2);
  EXPECT_NEAR(comparison.geomean_ratio, 1.0, 1e-12);
  EXPECT_EQ(comparison.wilcoxon.n, 2);
  EXPECT_EQ(comparison.wilcoxon.statistic, 1.5);
  EXPECT_DOUBLE_EQ(comparison.wilcoxon.p_value, 0.75);
}

TEST(CompareSuitesTest, ASuiteFasterEverywhereIsSignificant) {
  // Eight problems, a 10 % faster on each: W+ = 36, the largest possible, p = 1/256.
  std::vector<ScoredProblem> a, b;
  for (int i = 0; i < 8; ++i) {
    const std::string key = "p" + std::to_string(i);
    b.push_back(Solved(key, 1.0 + i));
    a.push_back(Solved(key, (1.0 + i) * (1.1 + 0.01 * i)));  // distinct ratios: no ties
  }
  Comparison comparison = CompareSuites(a, b);
  EXPECT_EQ(comparison.a_wins, 8);
  EXPECT_EQ(comparison.wilcoxon.statistic, 36);
  EXPECT_DOUBLE_EQ(comparison.wilcoxon.p_value, 1.0 / 256);
  Comparison reversed = CompareSuites(b, a);
  EXPECT_EQ(reversed.wilcoxon.statistic, 0);
  EXPECT_DOUBLE_EQ(reversed.wilcoxon.p_value, 1.0);
}

}  // namespace report_suite_stats_test
}  // namespace kernelpro::report
