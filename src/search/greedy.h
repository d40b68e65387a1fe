// The greedy baseline of the paper's search ablation (appendix E): always work on the most
// promising node instead of balancing exploration against exploitation.
//
// Next(), with "the current attempt" = every node attached since the latest ROOT expansion:
//   1. no expansion yet, or the last `restart_after_failures` expansions of the current attempt
//      produced no correct candidate → ROOT, initial (a fresh restart; the counter starts again);
//   2. else, the current attempt has a correct node → its best (highest speedup, earliest on
//      ties), optimize;
//   3. else → the failed node of the current attempt closest to working, debug, by the composite
//      priority (execution stage, error magnitude, partial speedup): see HigherRepairPriority.
//
// A restart abandons the old attempt: its nodes stay in the tree (and BestNode() still returns the
// global best across all attempts), but greedy expands only nodes of the new one, so a restart can
// leave a basin rather than return to the old best as soon as a fresh seed is worse.
//
// LLM_ERROR nodes (the LLM failed; search/strategy.h) are no part of any attempt: never a target,
// and an expansion that brought only one is not counted among the failures, so the same choice is
// retried.
//
// Record() attaches the children and backpropagates the plain reward (search/reward.h) so that the
// tree's statistics mean the same under both strategies; greedy marks no terminals. Like MCTS,
// Next() is a pure function of the tree (no randomness), so the tree is the whole state.
//
// Thread-safety: as SearchStrategy (search/strategy.h).
#pragma once

#include <memory>

#include "search/strategy.h"
#include "search/tree.h"

namespace kernelpro::search {

struct GreedyOptions {
  // Consecutive expansions without a correct candidate before a fresh restart from ROOT; <= 0
  // never restarts.
  int restart_after_failures = 3;
  // 0: the paper's reward. > 0: the energy-aware reward with this ε (search/reward.h).
  double energy_epsilon = 0;
};

// True when failed node `a` is a better repair target than `b`: the later execution stage first
// (incorrect output > runtime error or timeout > compile error), then the smaller error magnitude,
// then the higher partial speedup (a known value beats an unknown one in both), then the earlier
// node.
bool HigherRepairPriority(const Node& a, const Node& b);

// A greedy strategy over `tree`: Tree() for a new run, a stored tree (TreeFromJson) to resume one.
std::unique_ptr<SearchStrategy> NewGreedyStrategy(const GreedyOptions& options, Tree tree = Tree());

}  // namespace kernelpro::search
