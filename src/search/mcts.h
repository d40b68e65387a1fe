// Monte Carlo Tree Search over whole solutions (paper §3.3, Algorithm 1; DESIGN §6): the default
// search strategy. Each node is an evaluated kernel; evaluating a node's children replaces the
// rollout, and their rewards (search/reward.h) are backpropagated to the virtual ROOT.
//
// Next() descends from ROOT. At each node it compares
//   - the best non-terminal child by UCT(c) = mean(c) + C_uct·sqrt(ln N_node / N_c)
//     (an unvisited child scores +inf, so it is taken first), and
//   - a virtual new child: UCT with the node's own mean reward as prior and a fair share of its
//     visits, N_node / (children + 1) (§3.3.2),
// and expands the node when the virtual child scores strictly higher and progressive widening
// allows another child (children < C_pw·N_node^α, C_pw by kind: ROOT 2, FAILED 2, WORKING 3).
// Otherwise it descends into the best child. A node without a non-terminal child is expanded if
// widening allows; ROOT always is (ROOT re-expansion, §3.3.4). The mode follows the node: ROOT →
// initial, FAILED → debug, WORKING → optimize.
//
// Record() attaches the children, backpropagates, then marks terminals on the path from the
// expanded node up to ROOT (§3.3.4):
//   - a FAILED node with ≥ terminal_after_failed_repairs repair children, none of them correct;
//   - any node with no non-terminal child that widening no longer allows to grow. Its visits can
//     only grow through its subtree, so it could never be selected again; marking it lets the
//     exhaustion of a branch propagate upward.
// ROOT is never terminal, so the search never runs dry.
//
// LLM_ERROR children (search/strategy.h: the LLM failed, no candidate) are terminal from birth and
// carry no visit and no reward. Widening, the virtual child's fair share and the failed-repair
// rule count only evaluated children, so an LLM failure leaves every number Next() reads as it
// was: the next iteration retries the same node in the same mode.
//
// Determinism: the paper's MCTS makes no random choice. Every argmax breaks ties to the lowest
// node id (the earliest child), an exact tie between the virtual child and the best child goes to
// the existing child, and Next() is a pure function of the tree. MctsOptions::seed is therefore
// not consumed; it is part of the options so that a randomised variant would have its place (the
// run's --seed acts on the model's sampling instead: search/run_config.h, ProgrammerSeed).
//
// Thread-safety: as SearchStrategy (search/strategy.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>

#include "search/strategy.h"
#include "search/tree.h"

namespace kernelpro::search {

struct MctsOptions {
  double c_uct = std::sqrt(2.0);  // UCT exploration constant (§3.3.1)
  double c_pw_root = 2;           // widening constant at ROOT: fresh seeds (§3.3.2)
  double c_pw_failed = 2;         // at FAILED nodes: repairs
  double c_pw_working = 3;        // at WORKING nodes: optimisations
  double alpha = 0.5;             // widening exponent: at most C_pw·N^α children
  // A FAILED node with at least this many repair children, none correct, is terminal; <= 0 turns
  // the rule off.
  int terminal_after_failed_repairs = 3;
  // 0: the paper's reward. > 0: the energy-aware reward with this ε (search/reward.h).
  double energy_epsilon = 0;
  std::uint64_t seed = 0;  // recorded, not consumed (see above)
};

// UCT of `child` under a parent with `parent_visits` visits; +inf when the child is unvisited.
double Uct(const Node& child, int parent_visits, double c_uct);
// UCT of a hypothetical new child of `node`: node's mean reward as prior, N / (children + 1)
// visits (evaluated children: LLM_ERROR ones do not count).
double VirtualChildUct(const Node& node, double c_uct);
// The most children `node` may have at its current visit count: C_pw(kind)·N^α.
double WideningLimit(const Node& node, const MctsOptions& options);
// Whether `node` may get another child now: evaluated children < WideningLimit.
bool CanWiden(const Node& node, const MctsOptions& options);

// An MCTS strategy over `tree`: Tree() for a new run, a stored tree (TreeFromJson) to resume one.
// Terminal flags of a given tree are brought up to date with `options` first.
std::unique_ptr<SearchStrategy> NewMctsStrategy(const MctsOptions& options, Tree tree = Tree());

}  // namespace kernelpro::search
