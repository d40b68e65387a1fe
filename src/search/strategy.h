// SearchStrategy: the extension point that decides, iteration by iteration, which node of the
// search tree to expand next and in which prompt mode, and that learns from the evaluated
// candidates (paper §3.3, Algorithm 1). Two implementations: MCTS (search/mcts.h, the default) and
// the greedy baseline of appendix E (search/greedy.h). Strategies know nothing of LLMs, GPUs or
// files: they see outcomes and a tree, and are deterministic.
//
// Lifecycle, as the orchestrator drives it:
//
//   strategy = NewMctsStrategy(options, tree)   // Tree() for a new run; TreeFromJson(..) to resume
//   for t in 0 .. T-1:
//     Selection s = strategy->Next()            // which node, which mode (pure: no state change)
//     candidates  = programmer(s.mode, s.parent(), ...)          // N candidates
//     outcomes    = evaluate(candidates)                         // one CandidateOutcome per
//     candidate store outcomes under s.expansion strategy->Record(s, outcomes)             //
//     attach, backpropagate, mark terminals store ToJson(strategy->tree())
//   answer = strategy->BestNode()               // the global best across the whole tree
//
// Persistence and resume: a strategy's entire state is its tree. Next() is a pure function of the
// tree and the options, so nothing else (no RNG state, no cursor) needs saving. To resume, rebuild
// the strategy from the last stored tree with the same options. If the run died between Next and
// Record, the rebuilt strategy's Next() returns the same selection, so outcomes already stored
// under that expansion ordinal can be recorded without generating again. Equivalently, replaying
// every stored expansion's (Next, Record) from an empty tree rebuilds the identical tree.
//
// LLM failures: when the programmer's LLM call fails (an HTTP error after retries, a reply with no
// usable candidate) no candidate exists. The orchestrator records that expansion with one outcome
// of status llm_error, and the tree attaches an LLM_ERROR node (search/tree.h): terminal (never
// selected for debug or optimize: there is no code), no visit, no reward, nothing backpropagated
// (an LLM failure says nothing of the parent's subtree), but the expansion counts: the iteration
// is spent. Widening counts only evaluated children (Node::evaluated_children), and the statistics
// Next() reads are unchanged, so the next Next() retries the same choice: a transient failure
// costs an iteration, never a branch. Permanent LLM failures (a spent cassette, a bad key, an
// unknown model) never reach the strategy: the orchestrator stops the run before recording.
//
// Each Record is applied exactly once: a Selection carries the expansion ordinal it was made for,
// and Record refuses one that does not match tree().expansions() (a repeat or a stale selection).
//
// Thread-safety: none. One orchestrator thread drives a strategy; const methods may be called
// concurrently with each other only.
#pragma once

#include <optional>
#include <vector>

#include "agents/prompt_mode.h"
#include "core/status.h"
#include "search/tree.h"

namespace kernelpro::search {

// What to do next: expand `node` in `mode`.
struct Selection {
  int node = Tree::kRootId;  // ROOT: write fresh solutions from the reference
  agents::PromptMode mode = agents::PromptMode::kInitial;
  int expansion = 0;  // tree().expansions() when Next() made it; Record checks it

  // The node whose code and feedback the programmer starts from: none for ROOT.
  std::optional<int> parent() const {
    return node == Tree::kRootId ? std::nullopt : std::optional<int>(node);
  }
};

// The prompt mode for expanding a node of this kind (Algorithm 1, lines 6–8): ROOT → initial,
// FAILED → debug (repair), WORKING → optimize.
agents::PromptMode ModeFor(NodeKind kind);

// The rewards of an expansion's outcomes, in order: Reward, or EnergyAwareReward with
// `energy_epsilon` when it is positive.
std::vector<double> OutcomeRewards(const std::vector<CandidateOutcome>& outcomes,
                                   double energy_epsilon = 0);

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;

  // "mcts" or "greedy": for logs and the run store.
  virtual const char* name() const = 0;

  // The next node to expand and the mode to expand it in. Never a terminal node. Calling it again
  // without a Record in between returns the same selection.
  virtual Selection Next() const = 0;

  // Attaches one evaluated child per outcome (in order) under selection.node, backpropagates their
  // rewards to ROOT and updates whatever the strategy derives (terminal flags). Errors, with the
  // tree unchanged: a selection not made for the current tree (wrong expansion ordinal, a mode
  // that does not match the node, a terminal or unknown node) or no outcomes. The orchestrator
  // records a candidate the programmer failed to produce as an llm_error outcome (see above).
  virtual Status Record(const Selection& selection, std::vector<CandidateOutcome> outcomes) = 0;

  // True when the strategy has nothing left to propose. The paper's MCTS and greedy never are
  // (ROOT can always be expanded again), so the orchestrator's iteration budget ends their search.
  virtual bool Exhausted() const = 0;

  virtual const Tree& tree() const = 0;

  // The global best: the highest speedup among correct nodes, ties to the earlier node; none while
  // no node is correct (see Tree::BestNode).
  std::optional<int> BestNode() const { return tree().BestNode(); }
};

// The checks every Record starts with (see SearchStrategy::Record), for implementations.
Status CheckSelection(const Tree& tree, const Selection& selection,
                      const std::vector<CandidateOutcome>& outcomes);

}  // namespace kernelpro::search
