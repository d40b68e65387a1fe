#include "search/run_start.h"

#include <utility>

#include "search/greedy.h"
#include "search/mcts.h"
#include "search/reward.h"

namespace kernelpro::search {

std::unique_ptr<SearchStrategy> NewRunStrategy(const RunConfig& config, Tree tree) {
  // Only an energy-aware run lets energy into the reward; measure records it and leaves it out.
  const double epsilon = config.energy == EnergyMode::kAware ? kDefaultEnergyEpsilon : 0;
  if (config.search == "greedy") {
    GreedyOptions greedy;
    greedy.energy_epsilon = epsilon;
    return NewGreedyStrategy(greedy, std::move(tree));
  }
  MctsOptions mcts;
  mcts.seed = config.seed;
  mcts.energy_epsilon = epsilon;
  return NewMctsStrategy(mcts, std::move(tree));
}

std::optional<roofline::ReferenceAnalysis> StageOneOfRun(
    store::RunStore& store, std::int64_t run_id, agents::BenchmarkingAgent* agent,
    const std::string& problem, const std::string& saved,
    const std::function<void(const std::string&)>& note_and_log,
    const std::function<void(const std::string&)>& log) {
  auto run = store.GetRun(run_id);
  if (run.ok() && run->reference_analysis) {
    auto parsed = roofline::ReferenceAnalysisFromJson(*run->reference_analysis);
    if (parsed.ok()) return std::move(*parsed);
  }
  if (!agent) return std::nullopt;
  auto analysis = agent->Analyze(problem, saved);
  if (!analysis.ok()) {
    note_and_log("stage 1: " + analysis.status().message() + "; every speed tool runs");
    return std::nullopt;
  }
  Status s = store.SetReferenceAnalysis(run_id, ToJson(*analysis));
  if (!s.ok()) log("stage 1: could not store the analysis: " + s.message());
  return std::move(*analysis);
}

}  // namespace kernelpro::search
