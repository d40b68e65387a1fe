// What the search tests share: outcome shorthands, expanding a chosen node as the orchestrator
// would, and a scripted environment that plays the programmer and the evaluator deterministically
// so whole searches run in microseconds. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "search/strategy.h"
#include "search/tree.h"

namespace kernelpro::search::testing {

inline RatioInterval Point(double speedup) { return RatioInterval{speedup, speedup, speedup, 0}; }

inline CandidateOutcome Correct(double speedup) {
  CandidateOutcome outcome;
  outcome.status = eval::EvalStatus::kCorrect;
  outcome.speedup = Point(speedup);
  return outcome;
}

inline CandidateOutcome Failed(eval::EvalStatus status,
                               std::optional<double> error_magnitude = std::nullopt) {
  CandidateOutcome outcome;
  outcome.status = status;
  outcome.error_magnitude = error_magnitude;
  return outcome;
}

inline CandidateOutcome CompileError() { return Failed(eval::EvalStatus::kCompileError); }

// The programmer's LLM call failed: no candidate (search/strategy.h).
inline CandidateOutcome LlmError() { return Failed(eval::EvalStatus::kLlmError); }

// Records `outcomes` as an expansion of `node` in the mode its kind calls for, whatever Next()
// would have chosen: how the tests build synthetic trees.
inline Status ExpandNode(SearchStrategy& strategy, int node,
                         std::vector<CandidateOutcome> outcomes) {
  const Tree& tree = strategy.tree();
  Selection selection{node, ModeFor(tree.node(node).kind), tree.expansions()};
  return strategy.Record(selection, std::move(outcomes));
}

// Plays the programmer and the evaluator: outcomes depend on the mode, the parent's speedup and a
// splitmix64 stream (portable, unlike <random>'s distributions), so a run is reproducible.
//   initial   `seed_success` correct at 0.5x–1.5x; of the rest, 2/3 compile errors, 1/3 incorrect
//   debug     `repair_success` correct at 0.8x–1.2x; the rest half compile errors, half incorrect
//   optimize  70% correct at the parent's speedup × 0.8–1.4, 30% runtime errors
// The defaults make an ordinary problem; low successes a hard one, where repairs pile up.
class ScriptedEnvironment {
 public:
  explicit ScriptedEnvironment(std::uint64_t seed, double seed_success = 0.4,
                               double repair_success = 0.5)
      : state_(seed), seed_success_(seed_success), repair_success_(repair_success) {}

  std::vector<CandidateOutcome> Evaluate(const Tree& tree, const Selection& selection, int n) {
    std::vector<CandidateOutcome> outcomes;
    for (int i = 0; i < n; ++i) {
      double u = Uniform(), v = Uniform();
      CandidateOutcome outcome;
      switch (selection.mode) {
        case agents::PromptMode::kInitial:
          outcome = u < (1 - seed_success_) * 2 / 3 ? CompileError()
                    : u < 1 - seed_success_         ? Failed(eval::EvalStatus::kIncorrect, v)
                                                    : Correct(0.5 + v);
          break;
        case agents::PromptMode::kDebug:
          outcome = u < (1 - repair_success_) / 2 ? CompileError()
                    : u < 1 - repair_success_     ? Failed(eval::EvalStatus::kIncorrect, v)
                                                  : Correct(0.8 + 0.4 * v);
          break;
        case agents::PromptMode::kOptimize: {
          const Node& parent = tree.node(selection.node);
          double base = parent.speedup ? parent.speedup->estimate : 1.0;
          outcome =
              u < 0.3 ? Failed(eval::EvalStatus::kRuntimeError) : Correct(base * (0.8 + 0.6 * v));
          break;
        }
      }
      outcome.candidate = "c" + std::to_string(tree.size() + i);
      outcomes.push_back(outcome);
    }
    return outcomes;
  }

 private:
  double Uniform() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

  std::uint64_t state_;
  double seed_success_;
  double repair_success_;
};

// Checks the statistics every tree must keep: each node's visits are its own plus its children's
// and its total reward is its reward plus its children's totals (ROOT and LLM_ERROR nodes have
// neither of their own).
inline void ExpectConsistentStatistics(const Tree& tree) {
  for (const Node& node : tree.nodes()) {
    const bool none_of_its_own = node.is_root() || node.llm_error();
    int visits = none_of_its_own ? 0 : 1;
    double total = none_of_its_own ? 0.0 : node.reward;
    for (int child : node.children) {
      visits += tree.node(child).visits;
      total += tree.node(child).total_reward;
    }
    EXPECT_EQ(node.visits, visits) << "node " << node.id;
    EXPECT_NEAR(node.total_reward, total, 1e-9) << "node " << node.id;
  }
}

// Runs `iterations` rounds of Next → evaluate `candidates` → Record, as the orchestrator would,
// calling `check` on each selection before it is recorded.
inline void RunSearch(SearchStrategy& strategy, ScriptedEnvironment& environment, int iterations,
                      int candidates = 2,
                      const std::function<void(const Selection&)>& check = nullptr) {
  for (int t = 0; t < iterations; ++t) {
    Selection selection = strategy.Next();
    if (check) check(selection);
    Status status =
        strategy.Record(selection, environment.Evaluate(strategy.tree(), selection, candidates));
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
}

}  // namespace kernelpro::search::testing
