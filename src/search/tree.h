// The search tree (paper §3.3): every evaluated candidate of one optimisation run is a node, hung
// under the node it was generated from, below one virtual ROOT that stands for "write a fresh
// solution from the reference".
//
//   ROOT ─┬─ n1 FAILED   (initial; compile_error)  ─┬─ n3 WORKING (debug; 1.4x)
//         │                                          └─ n4 FAILED  (debug; incorrect)
//         └─ n2 WORKING  (initial; 1.1x)           ─── n5 WORKING (optimize; 2.3x)
//
// A node holds its verdict's headline numbers (status, speedup with its interval), its own
// reward, and the MCTS statistics (visits, total reward over its subtree, terminal flag). Node ids
// are dense and increase in attachment order, so a parent's id is always below its children's.
// Strategies (search/strategy.h) own and mutate a tree; everyone else reads it.
//
// The whole tree round-trips through JSON exactly (TreeFromJson(ToJson(t)) is identical to t,
// doubles included): the run store persists it and a resumed run rebuilds its strategy from it.
//
// Thread-safety: none. A Tree is a plain value; guard it externally if shared.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/prompt_mode.h"
#include "core/json_io.h"
#include "core/stats.h"
#include "core/status.h"
#include "eval/verdict.h"

namespace kernelpro::search {

// ROOT is the virtual node; WORKING nodes passed the correctness check (status correct); every
// other evaluated node is FAILED (compile error, runtime error, timeout, incorrect output).
// LLM_ERROR nodes (status llm_error) record an expansion whose candidate never existed because
// the LLM call failed (an HTTP error after retries, a reply without a usable candidate): nothing
// was evaluated, so they are terminal from birth, have no visits and no reward, and nothing is
// backpropagated for them; their expansion still counts (one iteration spent).
enum class NodeKind { kRoot, kFailed, kWorking, kLlmError };
const char* NodeKindName(NodeKind kind);  // "root", "failed", "working", "llm_error"

// What one evaluated candidate brings to the tree: the headline numbers of its EvalResult. A
// non-finite measurement (a NaN error from an output full of NaNs) is kept as unknown.
struct CandidateOutcome {
  std::string candidate;  // the candidate's id (run store key); free text to the search
  eval::EvalStatus status = eval::EvalStatus::kRuntimeError;
  // Speedup over the reference with its confidence interval, as in EvalResult::speedup. Expected
  // for correct candidates; for a failed one it is a partial speedup (greedy's repair tiebreak).
  // When only a point is known, low = high = estimate.
  std::optional<RatioInterval> speedup;
  // How far an incorrect output was from the reference (e.g. the largest absolute error); smaller
  // is closer. Only greedy's repair priority reads it.
  std::optional<double> error_magnitude;
  // Reference energy / candidate energy, for the energy-aware reward; > 1 is better.
  std::optional<double> energy_reduction;
  // Its timing is too noisy to rank by beyond what the interval shows (a spread of calls wider
  // than their median: NodeInfo::noisy_timing). A noisy interval is judged noisy either way.
  bool noisy_timing = false;
};

struct Node {
  int id = 0;
  int parent = -1;            // -1 for ROOT
  std::vector<int> children;  // in attachment order (ascending ids)
  NodeKind kind = NodeKind::kRoot;
  int depth = 0;                           // ROOT 0, its children 1, ...
  std::optional<agents::PromptMode> mode;  // the mode that produced it; none for ROOT
  int expansion = -1;  // the ordinal of the expansion (Record) that attached it; -1 for ROOT

  // The candidate's verdict (none / empty for ROOT).
  std::string candidate;
  std::optional<eval::EvalStatus> status;
  std::optional<RatioInterval> speedup;
  std::optional<double> error_magnitude;
  std::optional<double> energy_reduction;
  bool noisy_timing = false;  // as CandidateOutcome's, or NoisyInterval(*speedup)

  // MCTS statistics. `reward` is this node's own; `visits` and `total_reward` cover the node and
  // every descendant (one visit per evaluated candidate; ROOT and LLM_ERROR nodes have no reward
  // and no visit of their own).
  double reward = 0;
  int visits = 0;
  double total_reward = 0;
  bool terminal = false;  // excluded from selection (dead end, paper §3.3.4)
  // How many of `children` are LLM_ERROR nodes (derived, not written to JSON).
  int llm_error_children = 0;

  double MeanReward() const { return visits > 0 ? total_reward / visits : 0.0; }
  bool is_root() const { return kind == NodeKind::kRoot; }
  bool correct() const { return kind == NodeKind::kWorking; }
  bool llm_error() const { return kind == NodeKind::kLlmError; }
  // The children that hold an evaluated candidate: what widening and the failed-repair rule count.
  int evaluated_children() const { return static_cast<int>(children.size()) - llm_error_children; }
};

// True when `a` is the better solution: correct before not correct, then a known speedup before an
// unknown one, then the higher speedup estimate, then the earlier node. A strict total order.
bool BetterSolution(const Node& a, const Node& b);

// True when `child` is faster than `parent` beyond the noise: the child's lower bound lies above
// the parent's upper bound, and the child's interval is not noisy (core/stats.h NoisyInterval:
// a timing that wide is never accepted, wherever its bounds lie). With point intervals (low =
// high) this is plain `>`. For the orchestrator's rule of accepting a candidate as the new
// incumbent.
bool ClearlyFaster(const RatioInterval& child, const RatioInterval& parent);

// A speedup interval as tree and journal JSON hold it ({estimate, low, high, confidence}; null
// when none), and back (forgiving: missing bounds take the estimate).
Json IntervalJson(const std::optional<RatioInterval>& interval);
std::optional<RatioInterval> IntervalFromJson(const Json& json);

class Tree {
 public:
  static constexpr int kRootId = 0;

  Tree();  // ROOT only

  int size() const { return static_cast<int>(nodes_.size()); }
  bool Contains(int id) const { return id >= 0 && id < size(); }
  const Node& node(int id) const { return nodes_.at(id); }
  const Node& root() const { return nodes_.front(); }
  const std::vector<Node>& nodes() const { return nodes_; }
  // How many expansions have been attached (one per strategy Record).
  int expansions() const { return expansions_; }

  // Attaches one expansion: a child of `parent` per outcome, in order, each with its reward, one
  // visit and that reward as its total; then adds each to every ancestor up to ROOT
  // (backpropagation). An outcome with status llm_error becomes an LLM_ERROR child instead:
  // terminal, no visit, reward 0 whatever `rewards` says, nothing backpropagated. Returns the
  // new ids. Errors: unknown parent, no outcomes, a reward count
  // that differs from the outcome count, or a reward that is not finite.
  Result<std::vector<int>> AddExpansion(int parent, agents::PromptMode mode,
                                        const std::vector<CandidateOutcome>& outcomes,
                                        const std::vector<double>& rewards);

  void MarkTerminal(int id) { nodes_.at(id).terminal = true; }

  // The correct node with the highest speedup estimate (BetterSolution), shown faster than the
  // reference or not: what the report names when no kernel is the best.
  std::optional<int> FastestCorrectNode() const;
  // The fastest kernel by the interval rule (search/best_rule.h): none while no correct node's
  // whole interval lies above the reference's 1x.
  std::optional<int> FastestNode() const;
  // The global best (paper Algorithm 1, line 26), by the interval rule: FastestNode, except in an
  // energy-aware search (the only one whose nodes carry energy_reduction), where speed comes first
  // only as far as the harness can resolve it: among the nodes shown faster than the reference
  // whose intervals overlap the fastest's (neither of them noisy), the one with the highest energy
  // reduction, ties to BetterSolution. A node clearly slower than the fastest is never the best,
  // whatever it saves; none is the best while the reference is (the answer is the reference).
  std::optional<int> BestNode() const;

 private:
  friend Result<Tree> TreeFromJson(const Json& json);

  std::vector<Node> nodes_;
  int expansions_ = 0;
};

// {"version": 1, "expansions": k, "nodes": [{...}, ...]} with nodes in id order; children are not
// written (each node names its parent).
Json ToJson(const Tree& tree);
// Rebuilds a tree written by ToJson, checking its structure (ids, parents, depths, kinds against
// statuses, visit counts against the subtree) so that a damaged file is an error, not a bad search.
Result<Tree> TreeFromJson(const Json& json);

}  // namespace kernelpro::search
