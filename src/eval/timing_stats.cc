#include "eval/timing_stats.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "eval/check_batches.h"

namespace kernelpro::eval {

RoundPlan PlanRounds(int timing_trials, int timing_rounds) {
  const int trials = std::max(1, timing_trials);
  RoundPlan plan;
  plan.rounds = std::clamp(std::min(timing_rounds, trials / 5), std::min(2, trials), trials);
  plan.calls = (trials + plan.rounds - 1) / plan.rounds;
  return plan;
}

bool SecondSideTurn(int round, int slot) { return (round % 2 == 0) == (slot == 1); }

double WarmupSeconds(int round, int slot) { return round == 0 ? (slot == 0 ? 0.5 : 0.1) : 0.0; }

int WarmupCalls(int round, int calls) { return round == 0 ? 3 : (calls >= 4 ? 1 : 0); }

double VerifySampleProbability(const Json& outputs, long long verify_bytes, int planned_calls) {
  const double output_bytes = static_cast<double>(OutputBytes(outputs));
  double wanted = std::max(8.0, 0.2 * planned_calls);
  if (output_bytes > 0) {
    wanted = std::min(wanted, std::max(2.0, static_cast<double>(verify_bytes) / output_bytes));
  }
  return std::min(1.0, wanted / planned_calls);
}

void InterleavedTimes::AddBlock(bool second_side, const std::vector<double>& times_ms) {
  TimingSummary& into = second_side ? second : first;
  into.samples.insert(into.samples.end(), times_ms.begin(), times_ms.end());
  into.block_medians.push_back(Median(times_ms));
  (second_side ? second_blocks : first_blocks).push_back(times_ms);
}

void InterleavedTimes::SummarizeSides() {
  first.summary = Summarize(first.samples);
  second.summary = Summarize(second.samples);
}

RatioInterval InterleavedTimes::Ratio() const {
  return BootstrapBlockMedianRatio(first_blocks, second_blocks);
}

std::optional<ProcessSpread> WidenByProcessSpread(const std::vector<double>& reference_in_candidate,
                                                  double reference_median, double candidate_median,
                                                  RatioInterval& speedup) {
  if (reference_in_candidate.empty() || !(reference_median > 0) || !(candidate_median > 0)) {
    return std::nullopt;
  }
  const double here = Median(reference_in_candidate);
  ProcessSpread out;
  out.spread = std::abs(here / reference_median - 1.0);
  out.speedup_in_process = here / candidate_median;
  speedup.low /= 1.0 + out.spread;
  speedup.high *= 1.0 + out.spread;
  return out;
}

TimingSummary OneBlockTiming(std::vector<double> times_ms) {
  TimingSummary t;
  t.samples = std::move(times_ms);
  t.summary = Summarize(t.samples);
  t.block_medians = {t.summary.median};
  return t;
}

}  // namespace kernelpro::eval
