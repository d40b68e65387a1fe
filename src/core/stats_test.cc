#include "core/stats.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace kernelpro {
namespace core_stats_test {

// Timing-like samples: `base` with a small multiplicative noise, reproducible.
std::vector<double> NoisySamples(double base, double noise, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  std::vector<double> samples;
  for (int i = 0; i < count; ++i) samples.push_back(base * (1 + jitter(rng)));
  return samples;
}

// Expected values below are numpy.percentile(values, 100 * q) with the default "linear" method.
TEST(PercentileTest, InterpolatesBetweenClosestRanksLikeNumpy) {
  const std::vector<double> values = {4, 1, 3, 2};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(Percentile(values, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(values, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(Percentile(values, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile(values, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(Percentile(values, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(Percentile({15, 20, 35, 40, 50}, 0.4), 29.0);
  EXPECT_DOUBLE_EQ(Percentile({7}, 0.3), 7.0);
}

TEST(PercentileTest, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(Median({3, 1, 2, 10}), 2.5);
}

TEST(PercentileTest, EmptyInputGivesZero) {
  EXPECT_EQ(Percentile({}, 0.5), 0.0);
  EXPECT_EQ(Median({}), 0.0);
}

TEST(SummarizeTest, ReportsCentreAndSpread) {
  const SampleSummary s = Summarize({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.p10, 1.9);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_DOUBLE_EQ(s.iqr, 7.75 - 3.25);
  EXPECT_DOUBLE_EQ(s.relative_spread, 4.5 / 5.5);
}

TEST(SummarizeTest, EmptyAndZeroMedianInputs) {
  const SampleSummary empty = Summarize({});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.median, 0.0);
  EXPECT_EQ(empty.relative_spread, 0.0);
  // A zero median must not turn the relative spread into inf or NaN.
  EXPECT_EQ(Summarize({-1, 0, 0, 5}).relative_spread, 0.0);
}

TEST(BootstrapMedianRatioTest, ConstantSamplesGiveZeroWidthInterval) {
  const RatioInterval r = BootstrapMedianRatio({6, 6, 6, 6, 6}, {3, 3, 3});
  EXPECT_DOUBLE_EQ(r.estimate, 2.0);
  EXPECT_DOUBLE_EQ(r.low, 2.0);
  EXPECT_DOUBLE_EQ(r.high, 2.0);
  EXPECT_DOUBLE_EQ(r.confidence, 0.95);
}

TEST(BootstrapMedianRatioTest, TwiceSlowerNumeratorGivesNarrowIntervalAroundTwo) {
  const std::vector<double> fast = NoisySamples(1.0, 0.01, 100, 1);
  std::vector<double> slow;
  for (double t : NoisySamples(1.0, 0.01, 100, 2)) slow.push_back(2 * t);
  const RatioInterval r = BootstrapMedianRatio(slow, fast);
  EXPECT_NEAR(r.estimate, 2.0, 0.02);
  EXPECT_LE(r.low, r.estimate);
  EXPECT_GE(r.high, r.estimate);
  EXPECT_LT(r.low, 2.0);
  EXPECT_GT(r.high, 2.0);
  EXPECT_LT(r.high - r.low, 0.05);
}

TEST(BootstrapMedianRatioTest, NoisierSamplesGiveWiderInterval) {
  const std::vector<double> quiet = NoisySamples(1.0, 0.01, 50, 3);
  const std::vector<double> noisy = NoisySamples(1.0, 0.30, 50, 4);
  const RatioInterval tight = BootstrapMedianRatio(quiet, NoisySamples(1.0, 0.01, 50, 5));
  const RatioInterval wide = BootstrapMedianRatio(noisy, NoisySamples(1.0, 0.30, 50, 6));
  EXPECT_GT(wide.high - wide.low, 5 * (tight.high - tight.low));
}

TEST(BootstrapMedianRatioTest, DeterministicForAFixedSeed) {
  const std::vector<double> a = NoisySamples(1.5, 0.1, 30, 7);
  const std::vector<double> b = NoisySamples(1.0, 0.1, 30, 8);
  const RatioInterval first = BootstrapMedianRatio(a, b, 0.9, 500, 42);
  const RatioInterval second = BootstrapMedianRatio(a, b, 0.9, 500, 42);
  EXPECT_EQ(first.low, second.low);
  EXPECT_EQ(first.high, second.high);
  EXPECT_EQ(first.estimate, second.estimate);
  EXPECT_DOUBLE_EQ(first.confidence, 0.9);
  // The seed really drives the draws.
  const RatioInterval reseeded = BootstrapMedianRatio(a, b, 0.9, 500, 43);
  EXPECT_NE(std::make_pair(first.low, first.high), std::make_pair(reseeded.low, reseeded.high));
}

TEST(BootstrapMedianRatioTest, DegenerateInputsGiveZeros) {
  for (const RatioInterval& r :
       {BootstrapMedianRatio({}, {1, 2}), BootstrapMedianRatio({1, 2}, {}),
        BootstrapMedianRatio({1, 2}, {0, 0, 0}), BootstrapMedianRatio({1, 2}, {-3, -2})}) {
    EXPECT_EQ(r.estimate, 0.0);
    EXPECT_EQ(r.low, 0.0);
    EXPECT_EQ(r.high, 0.0);
    EXPECT_EQ(r.confidence, 0.0);
  }
}

TEST(BootstrapBlockMedianRatioTest, DriftBetweenRoundsWidensTheInterval) {
  // Ten rounds of ten calls per side; the same kernel on both sides.
  std::vector<std::vector<double>> steady_a, steady_b, drifting_a, drifting_b;
  for (int round = 0; round < 10; ++round) {
    steady_a.push_back(NoisySamples(1.0, 0.01, 10, 100 + round));
    steady_b.push_back(NoisySamples(1.0, 0.01, 10, 200 + round));
    // Rounds whose level moves by a few percent, differently for each side (a process's
    // placement, clocks changing between blocks).
    double shift_a = 1.0 + 0.03 * ((round * 7) % 5 - 2) / 2.0;
    double shift_b = 1.0 + 0.03 * ((round * 3) % 5 - 2) / 2.0;
    drifting_a.push_back(NoisySamples(shift_a, 0.01, 10, 300 + round));
    drifting_b.push_back(NoisySamples(shift_b, 0.01, 10, 400 + round));
  }
  const RatioInterval steady = BootstrapBlockMedianRatio(steady_a, steady_b);
  const RatioInterval drifting = BootstrapBlockMedianRatio(drifting_a, drifting_b);
  EXPECT_NEAR(steady.estimate, 1.0, 0.01);
  EXPECT_LE(steady.low, steady.estimate);
  EXPECT_GE(steady.high, steady.estimate);
  EXPECT_GT(drifting.high - drifting.low, 2 * (steady.high - steady.low));
  // Pooling the calls as if independent hides that spread.
  std::vector<double> pooled_a, pooled_b;
  for (const auto& b : drifting_a) pooled_a.insert(pooled_a.end(), b.begin(), b.end());
  for (const auto& b : drifting_b) pooled_b.insert(pooled_b.end(), b.begin(), b.end());
  const RatioInterval pooled = BootstrapMedianRatio(pooled_a, pooled_b);
  EXPECT_GT(drifting.high - drifting.low, pooled.high - pooled.low);
}

TEST(BootstrapBlockMedianRatioTest, DegenerateInputsGiveZeros) {
  for (const RatioInterval& r :
       {BootstrapBlockMedianRatio({}, {{1, 2}}), BootstrapBlockMedianRatio({{1, 2}}, {}),
        BootstrapBlockMedianRatio({{1, 2}}, {{0, 0}})}) {
    EXPECT_EQ(r.estimate, 0.0);
    EXPECT_EQ(r.confidence, 0.0);
  }
}

TEST(NoisyTimingTest, AnIntervalWiderThanHalfItsEstimateIsNoisy) {
  EXPECT_TRUE(NoisyInterval({1.24, 0.527, 1.969, 0.95}));  // the interval
  EXPECT_TRUE(NoisyInterval({2.0, 1.4, 2.6, 0.95}));       // 60 %
  EXPECT_FALSE(NoisyInterval({2.0, 1.6, 2.4, 0.95}));      // 40 %
  EXPECT_FALSE(NoisyInterval({0, 0, 0, 0}));               // nothing timed
}

TEST(NoisyTimingTest, ASpreadAboveTheMedianIsNoisy) {
  SampleSummary spread;
  spread.relative_spread = 2.87;  // IQR 287 %
  EXPECT_TRUE(NoisySpread(spread));
  spread.relative_spread = 0.9;
  EXPECT_FALSE(NoisySpread(spread));
}

}  // namespace core_stats_test
}  // namespace kernelpro
