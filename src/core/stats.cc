#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/text.h"

namespace kernelpro {
namespace {

// numpy's default ("linear") method: the rank q*(n-1) falls between two closest ranks, and the
// value is interpolated between them. `sorted` must be sorted and non-empty.
double PercentileOfSorted(const std::vector<double>& sorted, double q) {
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

// Sorts `values` in place; the bootstrap calls this thousands of times on a reused buffer.
double MedianInPlace(std::vector<double>& values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return PercentileOfSorted(values, 0.5);
}

// Fills `out` with values.size() draws from `values`, with replacement.
void Resample(const std::vector<double>& values, std::mt19937_64& rng, std::vector<double>& out) {
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  out.resize(values.size());
  for (double& v : out) v = values[pick(rng)];
}

}  // namespace

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return PercentileOfSorted(values, q);
}

double Median(std::vector<double> values) { return MedianInPlace(values); }

SampleSummary Summarize(const std::vector<double>& values) {
  SampleSummary summary;
  if (values.empty()) return summary;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  summary.count = sorted.size();
  summary.median = PercentileOfSorted(sorted, 0.5);
  summary.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / sorted.size();
  summary.min = sorted.front();
  summary.max = sorted.back();
  summary.p10 = PercentileOfSorted(sorted, 0.10);
  summary.p90 = PercentileOfSorted(sorted, 0.90);
  summary.iqr = PercentileOfSorted(sorted, 0.75) - PercentileOfSorted(sorted, 0.25);
  summary.relative_spread = summary.median != 0 ? summary.iqr / summary.median : 0;
  return summary;
}

namespace {

// The percentile bootstrap of median(numerator) / median(denominator) shared by both public
// forms: `draw` fills one resample of each side. The estimate uses every sample.
template <typename Draw>
RatioInterval BootstrapRatio(const std::vector<double>& numerator,
                             const std::vector<double>& denominator, double confidence,
                             int resamples, std::uint64_t seed, Draw draw) {
  RatioInterval result;
  result.confidence = 0;
  if (numerator.empty() || denominator.empty()) return result;
  const double denominator_median = Median(denominator);
  if (!(denominator_median > 0)) return result;

  result.confidence = std::clamp(confidence, 0.0, 1.0);
  result.estimate = Median(numerator) / denominator_median;
  result.low = result.high = result.estimate;

  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(std::max(resamples, 0));
  std::vector<double> numerator_draw, denominator_draw;
  for (int i = 0; i < resamples; ++i) {
    numerator_draw.clear();
    denominator_draw.clear();
    draw(rng, numerator_draw, denominator_draw);
    if (numerator_draw.empty() || denominator_draw.empty()) continue;
    const double draw_denominator_median = MedianInPlace(denominator_draw);
    // A denominator with some zero samples can resample to a zero median; that draw has no ratio.
    if (!(draw_denominator_median > 0)) continue;
    ratios.push_back(MedianInPlace(numerator_draw) / draw_denominator_median);
  }
  if (ratios.empty()) return result;
  std::sort(ratios.begin(), ratios.end());
  result.low = PercentileOfSorted(ratios, (1 - result.confidence) / 2);
  result.high = PercentileOfSorted(ratios, (1 + result.confidence) / 2);
  return result;
}

std::vector<double> Concatenated(const std::vector<std::vector<double>>& blocks) {
  std::vector<double> all;
  for (const auto& block : blocks) all.insert(all.end(), block.begin(), block.end());
  return all;
}

}  // namespace

RatioInterval BootstrapMedianRatio(const std::vector<double>& numerator,
                                   const std::vector<double>& denominator, double confidence,
                                   int resamples, std::uint64_t seed) {
  return BootstrapRatio(numerator, denominator, confidence, resamples, seed,
                        [&](std::mt19937_64& rng, std::vector<double>& n, std::vector<double>& d) {
                          Resample(numerator, rng, n);
                          Resample(denominator, rng, d);
                        });
}

RatioInterval BootstrapBlockMedianRatio(const std::vector<std::vector<double>>& numerator_blocks,
                                        const std::vector<std::vector<double>>& denominator_blocks,
                                        double confidence, int resamples, std::uint64_t seed) {
  const std::size_t rounds = std::min(numerator_blocks.size(), denominator_blocks.size());
  if (rounds == 0) return BootstrapRatio({}, {}, confidence, resamples, seed, [](auto&...) {});
  std::vector<double> block_draw;
  return BootstrapRatio(Concatenated(numerator_blocks), Concatenated(denominator_blocks),
                        confidence, resamples, seed,
                        [&](std::mt19937_64& rng, std::vector<double>& n, std::vector<double>& d) {
                          std::uniform_int_distribution<std::size_t> pick_round(0, rounds - 1);
                          for (std::size_t r = 0; r < rounds; ++r) {
                            // A round is drawn whole (both sides' blocks of it), then the calls
                            // within each block.
                            const std::size_t round = pick_round(rng);
                            if (!numerator_blocks[round].empty()) {
                              Resample(numerator_blocks[round], rng, block_draw);
                              n.insert(n.end(), block_draw.begin(), block_draw.end());
                            }
                            if (!denominator_blocks[round].empty()) {
                              Resample(denominator_blocks[round], rng, block_draw);
                              d.insert(d.end(), block_draw.begin(), block_draw.end());
                            }
                          }
                        });
}

std::string RatioText(const RatioInterval& r) {
  return FormatFixed(r.estimate) + "x [" + FormatFixed(r.low) + ", " + FormatFixed(r.high) + "]";
}

bool NoisyInterval(const RatioInterval& ratio) {
  if (!(ratio.estimate > 0)) return false;
  return (ratio.high - ratio.low) / ratio.estimate > kNoisyIntervalWidth;
}

bool NoisySpread(const SampleSummary& summary) {
  return summary.relative_spread > kNoisyRelativeSpread;
}

}  // namespace kernelpro
