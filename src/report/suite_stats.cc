#include "report/suite_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "core/stats.h"

namespace kernelpro::report {
namespace {

// The lower edges of the distribution's bands after "failed" and "< 0.5x"; the labels line up
// with the header's list.
const std::vector<double> kBandEdges = {0.5, 0.8, 1.0, 1.5, 2.0, 5.0, 10.0};
const std::vector<std::string> kBandLabels = {"failed", "< 0.5x", "0.5-0.8x", "0.8-1x", "1-1.5x",
                                              "1.5-2x", "2-5x",   "5-10x",    ">= 10x"};

// Correct with a speedup one can take the logarithm of.
bool Solved(const ScoredProblem& problem) {
  return problem.correct && std::isfinite(problem.speedup) && problem.speedup > 0;
}

// exp(mean(ln x)); 1 for no values (the empty product).
double Geomean(const std::vector<double>& values) {
  if (values.empty()) return 1;
  double sum = 0;
  for (double v : values) sum += std::log(v);
  return std::exp(sum / static_cast<double>(values.size()));
}

// 1-based band index of a solved speedup (0 is "failed").
std::size_t BandOf(double speedup) {
  std::size_t band = 1;
  for (double edge : kBandEdges) {
    if (speedup < edge) return band;
    ++band;
  }
  return band;
}

// P(W+ >= observed) under H0, every non-zero |d| signed + or - with probability 1/2. Ranks are
// doubled so that average ranks of ties (k + 0.5) stay integers; the distribution is counted in
// doubles, which hold every count exactly up to 2^53 (n <= 50 needs at most 2^50).
double ExactUpperTail(const std::vector<std::int64_t>& doubled_ranks,
                      std::int64_t doubled_statistic) {
  std::int64_t total = 0;
  for (std::int64_t r : doubled_ranks) total += r;
  std::vector<double> count(static_cast<std::size_t>(total) + 1, 0.0);
  count[0] = 1;
  std::int64_t reach = 0;
  for (std::int64_t r : doubled_ranks) {
    for (std::int64_t s = reach; s >= 0; --s) count[s + r] += count[s];
    reach += r;
  }
  double tail = 0;
  for (std::int64_t s = std::max<std::int64_t>(doubled_statistic, 0); s <= total; ++s) {
    tail += count[s];
  }
  return std::ldexp(tail, -static_cast<int>(doubled_ranks.size()));
}

}  // namespace

double Score(const ScoredProblem& problem, std::optional<double> cap) {
  double score = Solved(problem) ? problem.speedup : 1.0;
  if (cap) score = std::min(score, *cap);
  return score;
}

GroupStats SummarizeGroup(const std::vector<ScoredProblem>& problems) {
  GroupStats stats;
  stats.n = static_cast<int>(problems.size());
  std::vector<double> scores, correct_speedups;
  for (const ScoredProblem& problem : problems) {
    scores.push_back(Score(problem));
    if (Solved(problem)) correct_speedups.push_back(problem.speedup);
  }
  stats.correct = static_cast<int>(correct_speedups.size());
  stats.correct_rate = stats.n > 0 ? static_cast<double>(stats.correct) / stats.n : 0;

  for (const auto& [p, name] : kFastPThresholds) {
    int faster = 0;
    for (double s : correct_speedups) faster += s > p ? 1 : 0;
    stats.fast_p.push_back(stats.n > 0 ? static_cast<double>(faster) / stats.n : 0);
  }

  stats.geomean_speedup = Geomean(scores);
  if (!correct_speedups.empty()) {
    stats.geomean_speedup_correct_only = Geomean(correct_speedups);
    auto [low, high] = std::minmax_element(correct_speedups.begin(), correct_speedups.end());
    stats.min_speedup = *low;
    stats.max_speedup = *high;
  }
  stats.median_speedup = scores.empty() ? 1 : Median(scores);

  for (double cap : kCaps) {
    std::vector<double> capped;
    for (const ScoredProblem& problem : problems) capped.push_back(Score(problem, cap));
    stats.capped_geomean.push_back(Geomean(capped));
  }

  for (const std::string& label : kBandLabels) stats.distribution.push_back({label, 0});
  for (const ScoredProblem& problem : problems) {
    ++stats.distribution[Solved(problem) ? BandOf(problem.speedup) : 0].count;
  }
  return stats;
}

SuiteStats SummarizeSuite(const std::vector<ScoredProblem>& problems) {
  SuiteStats stats;
  stats.overall = SummarizeGroup(problems);
  std::map<int, std::vector<ScoredProblem>> by_level;
  for (const ScoredProblem& problem : problems) {
    if (problem.level > 0) by_level[problem.level].push_back(problem);
  }
  for (const auto& [level, members] : by_level) stats.levels[level] = SummarizeGroup(members);
  return stats;
}

WilcoxonResult WilcoxonSignedRank(const std::vector<double>& differences) {
  WilcoxonResult result;
  result.pairs = static_cast<int>(differences.size());
  std::vector<double> nonzero;
  for (double d : differences) {
    if (d == 0) {
      ++result.zeros;
    } else {
      nonzero.push_back(d);
    }
  }
  const int n = static_cast<int>(nonzero.size());
  result.n = n;
  if (n == 0) {  // W+ is 0 under every sign assignment: P(W+ >= 0) = 1, exactly
    result.exact = true;
    return result;
  }

  std::sort(nonzero.begin(), nonzero.end(),
            [](double x, double y) { return std::fabs(x) < std::fabs(y); });
  // Tie groups: each value joins the group while it is within the tolerance of the group's
  // smallest member (comparing to the first, not the previous, so ties do not chain along a
  // slowly rising sequence). A group of positions i..j (1-based) shares the rank (i + j) / 2.
  std::vector<std::int64_t> doubled_ranks(n);
  double tie_term = 0;  // sum over tie groups of t^3 - t
  for (int i = 0; i < n;) {
    const double first = std::fabs(nonzero[i]);
    int j = i + 1;
    while (j < n && std::fabs(nonzero[j]) - first <=
                        kWilcoxonTieTolerance * std::max(first, std::fabs(nonzero[j]))) {
      ++j;
    }
    for (int k = i; k < j; ++k) doubled_ranks[k] = (i + 1) + j;
    const double t = j - i;
    tie_term += t * t * t - t;
    i = j;
  }
  std::int64_t doubled_statistic = 0;
  for (int k = 0; k < n; ++k) {
    if (nonzero[k] > 0) doubled_statistic += doubled_ranks[k];
  }
  result.statistic = static_cast<double>(doubled_statistic) / 2;

  if (n <= kWilcoxonExactMaxN) {
    result.exact = true;
    result.p_value = ExactUpperTail(doubled_ranks, doubled_statistic);
    return result;
  }
  const double nd = n;
  const double mean = nd * (nd + 1) / 4;
  const double variance = nd * (nd + 1) * (2 * nd + 1) / 24 - tie_term / 48;
  const double z = (result.statistic - mean - 0.5) / std::sqrt(variance);
  result.z = z;
  result.p_value = 0.5 * std::erfc(z / std::sqrt(2.0));  // 1 - Phi(z), accurate in the tail
  return result;
}

Comparison CompareSuites(const std::vector<ScoredProblem>& a, const std::vector<ScoredProblem>& b,
                         std::optional<double> cap) {
  Comparison comparison;
  comparison.cap = cap;
  std::unordered_map<std::string, const ScoredProblem*> b_by_key;
  for (const ScoredProblem& problem : b) b_by_key.emplace(problem.key, &problem);  // first wins

  std::unordered_map<std::string, bool> paired_keys;
  std::vector<double> log_ratios;
  for (const ScoredProblem& problem : a) {
    auto partner = b_by_key.find(problem.key);
    if (partner == b_by_key.end()) {
      comparison.only_in_a.push_back(problem.key);
      continue;
    }
    if (!paired_keys.emplace(problem.key, true).second) continue;  // a repeated key: first wins
    const ScoredProblem& other = *partner->second;
    PairedProblem pair;
    pair.key = problem.key;
    pair.level = problem.level;
    pair.a = Score(problem, cap);
    pair.b = Score(other, cap);
    pair.a_correct = Solved(problem);
    pair.b_correct = Solved(other);
    pair.log_ratio = std::log(pair.a) - std::log(pair.b);
    // Exact comparison, as the test's zeros: equal scores (both failed, both at the cap, the same
    // measurement) give exactly 0.
    if (pair.log_ratio > 0) {
      ++comparison.a_wins;
    } else if (pair.log_ratio < 0) {
      ++comparison.b_wins;
    } else {
      ++comparison.ties;
    }
    log_ratios.push_back(pair.log_ratio);
    comparison.pairs.push_back(std::move(pair));
  }
  for (const ScoredProblem& problem : b) {
    if (paired_keys.count(problem.key) == 0 &&
        std::find(comparison.only_in_b.begin(), comparison.only_in_b.end(), problem.key) ==
            comparison.only_in_b.end()) {
      comparison.only_in_b.push_back(problem.key);
    }
  }

  if (!log_ratios.empty()) {
    double sum = 0;
    for (double r : log_ratios) sum += r;
    comparison.geomean_ratio = std::exp(sum / static_cast<double>(log_ratios.size()));
  }
  comparison.wilcoxon = WilcoxonSignedRank(log_ratios);
  return comparison;
}

}  // namespace kernelpro::report
