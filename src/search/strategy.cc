#include "search/strategy.h"

#include <string>

#include "search/reward.h"

namespace kernelpro::search {

agents::PromptMode ModeFor(NodeKind kind) {
  switch (kind) {
    case NodeKind::kRoot:
      return agents::PromptMode::kInitial;
    case NodeKind::kFailed:
      return agents::PromptMode::kDebug;
    case NodeKind::kWorking:
      return agents::PromptMode::kOptimize;
    case NodeKind::kLlmError:
      return agents::PromptMode::kInitial;  // never selected: terminal from birth
  }
  return agents::PromptMode::kInitial;
}

Status CheckSelection(const Tree& tree, const Selection& selection,
                      const std::vector<CandidateOutcome>& outcomes) {
  if (selection.expansion != tree.expansions()) {
    return Status::InvalidArgument(
        "selection was made for expansion " + std::to_string(selection.expansion) +
        " but the tree is at expansion " + std::to_string(tree.expansions()) +
        " (recorded twice, or stale)");
  }
  if (!tree.Contains(selection.node)) {
    return Status::InvalidArgument("no node " + std::to_string(selection.node) +
                                   " in the search tree");
  }
  const Node& node = tree.node(selection.node);
  if (node.terminal) {
    return Status::InvalidArgument("node " + std::to_string(node.id) + " is terminal");
  }
  if (selection.mode != ModeFor(node.kind)) {
    return Status::InvalidArgument("mode " + agents::ToString(selection.mode) + " does not fit " +
                                   NodeKindName(node.kind) + " node " + std::to_string(node.id));
  }
  if (outcomes.empty()) return Status::InvalidArgument("an expansion needs at least one outcome");
  return Status::Ok();
}

std::vector<double> OutcomeRewards(const std::vector<CandidateOutcome>& outcomes,
                                   double energy_epsilon) {
  std::vector<double> rewards;
  for (const CandidateOutcome& outcome : outcomes) {
    std::optional<double> speedup;
    if (outcome.speedup) speedup = outcome.speedup->estimate;
    rewards.push_back(
        energy_epsilon > 0
            ? EnergyAwareReward(outcome.status, speedup, outcome.energy_reduction, energy_epsilon)
            : Reward(outcome.status, speedup));
  }
  return rewards;
}

}  // namespace kernelpro::search
