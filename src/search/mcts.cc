#include "search/mcts.h"

#include <limits>
#include <utility>

#include "search/reward.h"

namespace kernelpro::search {
namespace {

double WideningConstant(NodeKind kind, const MctsOptions& options) {
  switch (kind) {
    case NodeKind::kRoot:
      return options.c_pw_root;
    case NodeKind::kFailed:
    case NodeKind::kLlmError:  // never expanded
      return options.c_pw_failed;
    case NodeKind::kWorking:
      return options.c_pw_working;
  }
  return options.c_pw_failed;
}

class MctsStrategy : public SearchStrategy {
 public:
  MctsStrategy(const MctsOptions& options, Tree tree) : options_(options), tree_(std::move(tree)) {
    // Children have higher ids than their parents, so one descending pass settles every subtree
    // before its root.
    for (int id = tree_.size() - 1; id > Tree::kRootId; --id) UpdateTerminal(id);
  }

  const char* name() const override { return "mcts"; }
  bool Exhausted() const override { return false; }
  const Tree& tree() const override { return tree_; }

  Selection Next() const override {
    int id = Tree::kRootId;
    while (true) {
      const Node& node = tree_.node(id);
      int best = BestLiveChild(node);
      // With no child to descend into, the node is expanded: ROOT regardless of widening
      // (re-expansion); any other node here can widen, because one that cannot is terminal (see
      // UpdateTerminal) and was skipped by its parent.
      bool expand = best < 0 || (CanWiden(node, options_) &&
                                 VirtualChildUct(node, options_.c_uct) >
                                     Uct(tree_.node(best), node.visits, options_.c_uct));
      if (expand) return Selection{id, ModeFor(node.kind), tree_.expansions()};
      id = best;
    }
  }

  Status Record(const Selection& selection, std::vector<CandidateOutcome> outcomes) override {
    Status status = CheckSelection(tree_, selection, outcomes);
    if (!status.ok()) return status;
    std::vector<double> rewards = OutcomeRewards(outcomes, options_.energy_epsilon);
    auto added = tree_.AddExpansion(selection.node, selection.mode, outcomes, rewards);
    if (!added.ok()) return added.status();
    // Only the expanded node gained children; above it, a node can become terminal only because a
    // child just did, so the walk up the path covers every change.
    for (int id = selection.node; id > Tree::kRootId; id = tree_.node(id).parent) {
      UpdateTerminal(id);
    }
    return Status::Ok();
  }

 private:
  // The non-terminal child with the highest UCT, the earliest on ties; -1 when there is none.
  int BestLiveChild(const Node& node) const {
    int best = -1;
    double best_uct = 0;
    for (int child : node.children) {
      const Node& c = tree_.node(child);
      if (c.terminal) continue;
      double uct = Uct(c, node.visits, options_.c_uct);
      if (best < 0 || uct > best_uct) {
        best = child;
        best_uct = uct;
      }
    }
    return best;
  }

  void UpdateTerminal(int id) {
    const Node& node = tree_.node(id);
    if (node.is_root() || node.terminal) return;
    int threshold = options_.terminal_after_failed_repairs;
    bool failed_repairs = false;
    if (node.kind == NodeKind::kFailed && threshold > 0 && node.evaluated_children() >= threshold) {
      failed_repairs = true;  // LLM_ERROR children are no repairs, and none is correct
      for (int child : node.children)
        failed_repairs = failed_repairs && !tree_.node(child).correct();
    }
    bool exhausted = BestLiveChild(node) < 0 && !CanWiden(node, options_);
    if (failed_repairs || exhausted) tree_.MarkTerminal(id);
  }

  MctsOptions options_;
  Tree tree_;
};

}  // namespace

double Uct(const Node& child, int parent_visits, double c_uct) {
  if (child.visits <= 0) return std::numeric_limits<double>::infinity();
  double log_parent = parent_visits > 1 ? std::log(static_cast<double>(parent_visits)) : 0.0;
  return child.MeanReward() + c_uct * std::sqrt(log_parent / child.visits);
}

double VirtualChildUct(const Node& node, double c_uct) {
  if (node.visits <= 0) return std::numeric_limits<double>::infinity();
  double fair_share = static_cast<double>(node.visits) / (node.evaluated_children() + 1);
  double log_visits = node.visits > 1 ? std::log(static_cast<double>(node.visits)) : 0.0;
  return node.MeanReward() + c_uct * std::sqrt(log_visits / fair_share);
}

double WideningLimit(const Node& node, const MctsOptions& options) {
  return WideningConstant(node.kind, options) *
         std::pow(static_cast<double>(node.visits), options.alpha);
}

bool CanWiden(const Node& node, const MctsOptions& options) {
  return static_cast<double>(node.evaluated_children()) < WideningLimit(node, options);
}

std::unique_ptr<SearchStrategy> NewMctsStrategy(const MctsOptions& options, Tree tree) {
  return std::make_unique<MctsStrategy>(options, std::move(tree));
}

}  // namespace kernelpro::search
