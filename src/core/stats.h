// Statistics for timing samples: medians, spread, and a bootstrap confidence interval for the
// ratio of two medians (the speedup). Pure functions; the bootstrap is seeded so the same samples
// always give the same interval.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kernelpro {

struct SampleSummary {
  std::size_t count = 0;
  double median = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  double p10 = 0;              // 10th percentile
  double p90 = 0;              // 90th percentile
  double iqr = 0;              // interquartile range (p75 - p25)
  double relative_spread = 0;  // iqr / median; 0 when median is 0
};

// Percentile by linear interpolation between closest ranks (q in [0, 1]). Empty input gives 0.
double Percentile(std::vector<double> values, double q);
double Median(std::vector<double> values);
SampleSummary Summarize(const std::vector<double>& values);

struct RatioInterval {
  double estimate = 0;  // median(numerator) / median(denominator)
  double low = 0;       // lower bound of the confidence interval
  double high = 0;      // upper bound
  double confidence = 0.95;
};

// A speedup as people read it: "1.84x [1.82, 1.86]".
std::string RatioText(const RatioInterval& ratio);

// When a timing is too noisy to rank kernels by. Such a speedup is printed with a "noisy timing"
// note wherever it appears and never counts as faster than anything (search/tree.h
// ClearlyFaster): a rerun may well land on the other side of its parent.
//   - The interval is wider than half its estimate: [0.53, 1.97] around 1.24x spans 1.16x, and
//     could not even say whether the kernel is faster than the reference. Intervals of a steady
//     GPU timing are a few percent wide; 50 % only happens on a busy or throttling machine.
inline constexpr double kNoisyIntervalWidth = 0.5;  // (high - low) / estimate above this: noisy
//   - One side's calls spread more than their median: IQR / median above 100 %.
inline constexpr double kNoisyRelativeSpread = 1.0;

// (high - low) / estimate > kNoisyIntervalWidth; false for an estimate of 0 (nothing timed).
bool NoisyInterval(const RatioInterval& ratio);
// relative_spread (IQR / median) > kNoisyRelativeSpread.
bool NoisySpread(const SampleSummary& summary);

// Speedup-style ratio median(numerator)/median(denominator) with a percentile-bootstrap interval:
// each resample draws both sample sets with replacement. Deterministic for a given seed.
// Both inputs must be non-empty and the denominator median positive; otherwise all fields are 0.
RatioInterval BootstrapMedianRatio(const std::vector<double>& numerator,
                                   const std::vector<double>& denominator, double confidence = 0.95,
                                   int resamples = 2000, std::uint64_t seed = 0x5eed);

// The same ratio for timings taken in interleaved rounds: block i of each side ran in round i
// (the reference's block and the candidate's block, back to back). The interval resamples whole
// rounds, then the calls within each drawn block, so drift from round to round (clocks,
// temperature, a neighbour on the machine) widens it instead of hiding in the pooled calls.
// The estimate is the ratio of the medians of all calls. Rounds beyond the shorter side's count
// are in the estimate only.
RatioInterval BootstrapBlockMedianRatio(const std::vector<std::vector<double>>& numerator_blocks,
                                        const std::vector<std::vector<double>>& denominator_blocks,
                                        double confidence = 0.95, int resamples = 2000,
                                        std::uint64_t seed = 0x5eed);

}  // namespace kernelpro
