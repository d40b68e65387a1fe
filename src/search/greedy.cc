#include "search/greedy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "search/reward.h"

namespace kernelpro::search {
namespace {

// How far a failed candidate got: it built, it ran, it produced an output.
int ExecutionStage(const Node& node) {
  if (!node.status) return 0;
  switch (*node.status) {
    case eval::EvalStatus::kCompileError:
      return 1;
    case eval::EvalStatus::kRuntimeError:
    case eval::EvalStatus::kTimeout:
      return 2;
    case eval::EvalStatus::kIncorrect:
      return 3;
    case eval::EvalStatus::kCorrect:
      return 4;
    case eval::EvalStatus::kLlmError:
      return 0;
  }
  return 0;
}

class GreedyStrategy : public SearchStrategy {
 public:
  GreedyStrategy(const GreedyOptions& options, Tree tree)
      : options_(options), tree_(std::move(tree)) {}

  const char* name() const override { return "greedy"; }
  bool Exhausted() const override { return false; }
  const Tree& tree() const override { return tree_; }

  Selection Next() const override {
    const int expansions = tree_.expansions();
    auto root = Selection{Tree::kRootId, agents::PromptMode::kInitial, expansions};
    if (expansions == 0) return root;

    // The current attempt starts at the latest ROOT expansion.
    // LLM_ERROR nodes are skipped throughout: they are no attempt and no repair target, and an
    // expansion that brought only one neither counts as a failure nor ends a run of them, so the
    // next Next() retries the same choice (search/strategy.h).
    int attempt_start = 0;
    std::vector<bool> evaluated(expansions, false);
    for (const Node& node : tree_.nodes()) {
      if (node.is_root() || node.llm_error()) continue;
      evaluated[node.expansion] = true;
      if (node.parent == Tree::kRootId) attempt_start = std::max(attempt_start, node.expansion);
    }
    std::vector<bool> had_correct(expansions, false);
    int best_correct = -1, best_failed = -1;
    for (const Node& node : tree_.nodes()) {
      if (node.is_root() || node.llm_error() || node.expansion < attempt_start) continue;
      if (node.correct()) {
        had_correct[node.expansion] = true;
        if (best_correct < 0 || BetterSolution(node, tree_.node(best_correct))) {
          best_correct = node.id;
        }
      } else if (best_failed < 0 || HigherRepairPriority(node, tree_.node(best_failed))) {
        best_failed = node.id;
      }
    }
    int failures = 0;
    for (int e = expansions - 1; e >= attempt_start && !had_correct[e]; --e) {
      if (evaluated[e]) ++failures;
    }
    if (options_.restart_after_failures > 0 && failures >= options_.restart_after_failures) {
      return root;
    }
    int target = best_correct >= 0 ? best_correct : best_failed;
    if (target < 0) return root;  // only when the tree holds no attempt at all
    return Selection{target, ModeFor(tree_.node(target).kind), expansions};
  }

  Status Record(const Selection& selection, std::vector<CandidateOutcome> outcomes) override {
    Status status = CheckSelection(tree_, selection, outcomes);
    if (!status.ok()) return status;
    std::vector<double> rewards = OutcomeRewards(outcomes, options_.energy_epsilon);
    auto added = tree_.AddExpansion(selection.node, selection.mode, outcomes, rewards);
    return added.ok() ? Status::Ok() : added.status();
  }

 private:
  GreedyOptions options_;
  Tree tree_;
};

}  // namespace

bool HigherRepairPriority(const Node& a, const Node& b) {
  int stage_a = ExecutionStage(a), stage_b = ExecutionStage(b);
  if (stage_a != stage_b) return stage_a > stage_b;
  if (a.error_magnitude.has_value() != b.error_magnitude.has_value()) {
    return a.error_magnitude.has_value();
  }
  if (a.error_magnitude && *a.error_magnitude != *b.error_magnitude) {
    return *a.error_magnitude < *b.error_magnitude;
  }
  if (a.speedup.has_value() != b.speedup.has_value()) return a.speedup.has_value();
  if (a.speedup && a.speedup->estimate != b.speedup->estimate) {
    return a.speedup->estimate > b.speedup->estimate;
  }
  return a.id < b.id;
}

std::unique_ptr<SearchStrategy> NewGreedyStrategy(const GreedyOptions& options, Tree tree) {
  return std::make_unique<GreedyStrategy>(options, std::move(tree));
}

}  // namespace kernelpro::search
