// The statistics researchers publish about a suite of problems (KernelBench's and the paper's
// conventions), as pure functions of one score per problem:
//
//   correct rate       problems with a validated kernel / problems in the suite
//   fast_p             problems whose kernel is correct AND faster than p times the baseline
//                      (speedup > p), over all problems; fast_0 is the correct rate
//   geomean            geometric mean speedup with failures counted as 1.0x (the paper's
//                      convention: an unsolved task keeps the reference), and over the correct
//                      problems only (KernelBench's convention); both always shown, labelled
//   median             of the speedups with failures as 1.0x
//   capping            the failures-as-1.0x geomean after clamping every speedup to min(s, cap),
//                      for the caps the paper's Table 5 uses, so outliers can be seen to matter
//                      or not
//   distribution       how many problems fall in each speedup band, always all nine bands in this
//                      order: "failed", "< 0.5x", "0.5-0.8x", "0.8-1x", "1-1.5x", "1.5-2x",
//                      "2-5x", "5-10x", ">= 10x"; a band holds lower <= speedup < upper, so a
//                      speedup of exactly 1.0 is in "1-1.5x" (and does not count in fast_1.0)
//
// Between two suites run on the same problems (an ablation), CompareSuites pairs the problems by
// key and runs a one-sided Wilcoxon signed-rank test on the paired log-speedup differences
// (H1: the first suite is faster): zero differences are dropped ("wilcox" zero method) and n is
// the number of non-zero pairs; the p-value is exact (the permutation distribution of the rank
// sum, ties given average ranks) for n <= kWilcoxonExactMaxN, and otherwise from the normal
// approximation with tie correction and a continuity correction of 0.5. Two |differences| tie
// when they agree to a relative kWilcoxonTieTolerance, so that log ratios equal but for rounding
// (ln 4 - ln 2 and ln 2 - ln 1) share a rank. docs/suite-statistics.md has the formulas.
//
// Pure functions; safe from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kernelpro::report {

// One problem's score, as the statistics read it.
struct ScoredProblem {
  std::string key;  // unique within a suite, the pairing key of a comparison ("level1/19_ReLU")
  int level = 0;    // KernelBench level; 0: the suite has no levels
  // A correct problem whose speedup is not a positive finite number (nothing was timed) counts as
  // a failure everywhere: there is no speedup to average.
  bool correct = false;
  double speedup = 0;  // baseline time / kernel time; read only when `correct`
};

// The thresholds of fast_p, in order, and how the JSON report names them.
inline const std::vector<std::pair<double, std::string>> kFastPThresholds = {
    {0.0, "0"}, {0.5, "0.5"}, {0.8, "0.8"}, {1.0, "1.0"}, {1.5, "1.5"}, {2.0, "2.0"}};
// The caps of the capping table (the uncapped geomean is `geomean_speedup`).
inline const std::vector<double> kCaps = {2, 5, 10, 20, 25, 50, 100};
// The distribution's bands: [lower, upper) in speedup; a failure is its own band, first.
struct SpeedupBand {
  std::string label;  // "failed", "< 0.5x", "0.5-0.8x", ..., ">= 10x"
  int count = 0;
};

struct GroupStats {
  int n = 0;        // problems
  int correct = 0;  // with a validated kernel
  double correct_rate = 0;
  // Fraction of all n problems that are correct with speedup > p, in kFastPThresholds order.
  std::vector<double> fast_p;
  // Failures as 1.0x. 1.0 for an empty group.
  double geomean_speedup = 1;
  // Correct problems only; none when no problem is correct.
  std::optional<double> geomean_speedup_correct_only;
  double median_speedup = 1;                       // failures as 1.0x
  std::optional<double> min_speedup, max_speedup;  // over the correct problems
  // geomean (failures as 1.0x) of min(speedup, cap), in kCaps order.
  std::vector<double> capped_geomean;
  std::vector<SpeedupBand> distribution;
};

struct SuiteStats {
  GroupStats overall;
  std::map<int, GroupStats> levels;  // only levels > 0 that occur
};

GroupStats SummarizeGroup(const std::vector<ScoredProblem>& problems);
SuiteStats SummarizeSuite(const std::vector<ScoredProblem>& problems);

// The failures-as-1.0x score of a problem: its speedup when correct, else 1.0; then min(., cap)
// when a cap is given.
double Score(const ScoredProblem& problem, std::optional<double> cap = std::nullopt);

inline constexpr int kWilcoxonExactMaxN = 50;
// |a - b| <= kWilcoxonTieTolerance * max(|a|, |b|): the two ranks tie. Rounding in a log ratio is
// about 1e-16 relative; two measured speedups differing by one part in a billion are the same.
inline constexpr double kWilcoxonTieTolerance = 1e-9;

struct WilcoxonResult {
  int pairs = 0;            // differences given
  int zeros = 0;            // of them exactly zero, dropped
  int n = 0;                // non-zero differences: the test's sample size
  double statistic = 0;     // W+: the sum of the ranks of the positive differences
  double p_value = 1;       // one-sided, H1: the differences tend to be positive; 1 when n == 0
  bool exact = false;       // exact distribution (n <= kWilcoxonExactMaxN) or normal approximation
  std::optional<double> z;  // the normal approximation's z (continuity corrected), when used
};

// One-sided Wilcoxon signed-rank test of `differences` (H1: median difference > 0).
WilcoxonResult WilcoxonSignedRank(const std::vector<double>& differences);

// Per problem, the two suites' scores side by side (problems present in both).
struct PairedProblem {
  std::string key;
  int level = 0;
  double a = 1, b = 1;  // failures-as-1.0x scores (capped when a cap was given)
  bool a_correct = false, b_correct = false;
  double log_ratio = 0;  // ln(a) - ln(b): > 0 where the first suite is faster
};

struct Comparison {
  std::vector<PairedProblem> pairs;    // in the first suite's order
  std::vector<std::string> only_in_a;  // keys without a partner, left out of the test
  std::vector<std::string> only_in_b;
  int a_wins = 0, b_wins = 0, ties = 0;
  double geomean_ratio = 1;   // geomean(a) / geomean(b) over the pairs
  std::optional<double> cap;  // the cap applied to both sides, if any
  WilcoxonResult wilcoxon;    // on the pairs' log_ratio
};

// Pairs `a` and `b` by key; scores are failures-as-1.0x, clamped to `cap` when given.
Comparison CompareSuites(const std::vector<ScoredProblem>& a, const std::vector<ScoredProblem>& b,
                         std::optional<double> cap = std::nullopt);

}  // namespace kernelpro::report
