// MCTS (paper §3.3): UCT and virtual-child arithmetic against hand-computed values, the widening
// gates and their asymmetry, expansion decisions on small synthetic trees, terminal marking and
// its upward propagation, ROOT re-expansion, and whole scripted searches for determinism, resume
// and invariants.
#include "search/mcts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "search/search_testing.h"

namespace kernelpro::search {
namespace search_mcts_test {

using agents::PromptMode;
using testing::CompileError;
using testing::Correct;
using testing::ExpandNode;
using testing::Failed;
using testing::LlmError;
using testing::RunSearch;
using testing::ScriptedEnvironment;

const double kC = std::sqrt(2.0);

Node Stats(NodeKind kind, int visits, double total_reward, int children) {
  Node node;
  node.kind = kind;
  node.visits = visits;
  node.total_reward = total_reward;
  node.children.assign(children, 0);
  return node;
}

void ExpectSelection(const Selection& selection, int node, PromptMode mode) {
  EXPECT_EQ(selection.node, node);
  EXPECT_EQ(selection.mode, mode);
}

TEST(MctsTest, UctMatchesHandComputedValues) {
  // 0.5 + √2·sqrt(ln 10 / 2) = 0.5 + 1.414214·1.072983
  EXPECT_NEAR(Uct(Stats(NodeKind::kWorking, 2, 1.0, 0), 10, kC), 2.017427, 1e-6);
  // −3 + √2·sqrt(ln 2 / 1)
  EXPECT_NEAR(Uct(Stats(NodeKind::kFailed, 1, -3.0, 0), 2, kC), -1.822590, 1e-6);
  EXPECT_DOUBLE_EQ(Uct(Stats(NodeKind::kWorking, 2, 1.0, 0), 1, kC), 0.5);  // ln 1 = 0
  EXPECT_DOUBLE_EQ(Uct(Stats(NodeKind::kWorking, 4, 2.0, 0), 50, 0.0), 0.5);
  EXPECT_TRUE(std::isinf(Uct(Stats(NodeKind::kWorking, 0, 0.0, 0), 10, kC)));  // unvisited first
}

TEST(MctsTest, VirtualChildUsesTheMeanAsPriorAndAFairShareOfVisits) {
  // mean 0.5, fair share 6 / (2 + 1) = 2: 0.5 + √2·sqrt(ln 6 / 2)
  EXPECT_NEAR(VirtualChildUct(Stats(NodeKind::kWorking, 6, 3.0, 2), kC), 1.838566, 1e-6);
  // Fair share 2 / 3 at a ROOT with two failed seeds: −3 + √2·sqrt(ln 2 / (2/3))
  EXPECT_NEAR(VirtualChildUct(Stats(NodeKind::kRoot, 2, -6.0, 2), kC), -1.557973, 1e-6);
  EXPECT_DOUBLE_EQ(VirtualChildUct(Stats(NodeKind::kFailed, 1, -3.0, 0), kC), -3.0);
}

TEST(MctsTest, WideningAllowsCpwTimesRootNChildren) {
  MctsOptions options;
  EXPECT_DOUBLE_EQ(WideningLimit(Stats(NodeKind::kRoot, 4, 0, 0), options), 4.0);
  EXPECT_DOUBLE_EQ(WideningLimit(Stats(NodeKind::kRoot, 9, 0, 0), options), 6.0);
  EXPECT_DOUBLE_EQ(WideningLimit(Stats(NodeKind::kWorking, 4, 0, 0), options), 6.0);
  EXPECT_DOUBLE_EQ(WideningLimit(Stats(NodeKind::kFailed, 4, 0, 0), options), 4.0);
  EXPECT_TRUE(CanWiden(Stats(NodeKind::kRoot, 4, 0, 3), options));
  EXPECT_FALSE(CanWiden(Stats(NodeKind::kRoot, 4, 0, 4), options));
  EXPECT_TRUE(CanWiden(Stats(NodeKind::kRoot, 9, 0, 5), options));
  EXPECT_FALSE(CanWiden(Stats(NodeKind::kRoot, 9, 0, 6), options));
  EXPECT_TRUE(CanWiden(Stats(NodeKind::kWorking, 4, 0, 5), options));
  EXPECT_FALSE(CanWiden(Stats(NodeKind::kWorking, 4, 0, 6), options));
  options.alpha = 1.0;
  EXPECT_DOUBLE_EQ(WideningLimit(Stats(NodeKind::kRoot, 4, 0, 0), options), 8.0);
}

TEST(MctsTest, WorkingNodesBranchWiderThanFailedOnes) {
  MctsOptions options;
  // Same visits, same children: a working node may grow, a failed one may not.
  EXPECT_TRUE(CanWiden(Stats(NodeKind::kWorking, 4, 0, 4), options));
  EXPECT_FALSE(CanWiden(Stats(NodeKind::kFailed, 4, 0, 4), options));
  options.c_pw_failed = 3;
  EXPECT_TRUE(CanWiden(Stats(NodeKind::kFailed, 4, 0, 4), options));
}

TEST(MctsTest, TheFirstSelectionWritesFreshSeeds) {
  auto mcts = NewMctsStrategy({});
  Selection first = mcts->Next();
  ExpectSelection(first, Tree::kRootId, PromptMode::kInitial);
  EXPECT_EQ(first.parent(), std::nullopt);
  EXPECT_EQ(first.expansion, 0);
  EXPECT_FALSE(mcts->Exhausted());
  EXPECT_STREQ(mcts->name(), "mcts");
}

TEST(MctsTest, TheVirtualChildWinsAtRootWhenAllSeedsFailed) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {CompileError(), CompileError()}).ok());
  const Tree& tree = mcts->tree();
  // Virtual −1.557973 beats each seed's −1.822590, and 2 children < 2·√2.
  EXPECT_GT(VirtualChildUct(tree.root(), kC), Uct(tree.node(1), tree.root().visits, kC));
  ExpectSelection(mcts->Next(), Tree::kRootId, PromptMode::kInitial);
}

TEST(MctsTest, AStrongSeedBeatsTheVirtualChild) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(std::exp(1.0)), CompileError()}).ok());
  // Seed 1: 1 + √2·sqrt(ln 2) = 2.177410; virtual: −1 + √2·sqrt(ln 2 / (2/3)) = 0.442027.
  EXPECT_NEAR(Uct(mcts->tree().node(1), 2, kC), 2.177410, 1e-6);
  EXPECT_NEAR(VirtualChildUct(mcts->tree().root(), kC), 0.442027, 1e-6);
  Selection next = mcts->Next();
  ExpectSelection(next, 1, PromptMode::kOptimize);
  EXPECT_EQ(next.parent(), 1);
}

TEST(MctsTest, TheWideningGateOverridesAWinningVirtualChild) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {CompileError(), CompileError()}).ok());
  ASSERT_TRUE(ExpandNode(*mcts, 0, {CompileError(), CompileError()}).ok());
  const Tree& tree = mcts->tree();
  // Virtual −1.138351 still beats −1.334891, but ROOT has 4 = 2·√4 children: descend instead,
  // to the earliest of four equal seeds, and repair it.
  EXPECT_NEAR(VirtualChildUct(tree.root(), kC), -1.138351, 1e-6);
  EXPECT_NEAR(Uct(tree.node(1), 4, kC), -1.334891, 1e-6);
  EXPECT_FALSE(CanWiden(tree.root(), MctsOptions{}));
  ExpectSelection(mcts->Next(), 1, PromptMode::kDebug);
}

TEST(MctsTest, AnExactTieGoesToTheExistingChild) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(2.0)}).ok());
  // Both score ln 2 (ln N = 0 at N = 1): refine the seed rather than write another.
  EXPECT_DOUBLE_EQ(VirtualChildUct(mcts->tree().root(), kC), Uct(mcts->tree().node(1), 1, kC));
  ExpectSelection(mcts->Next(), 1, PromptMode::kOptimize);
}

TEST(MctsTest, AWorkingNodeIsExpandedAgainWhenItsChildrenDisappoint) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(2.0), CompileError()}).ok());
  Selection refine = mcts->Next();
  ExpectSelection(refine, 1, PromptMode::kOptimize);
  ASSERT_TRUE(mcts->Record(refine, {Correct(1.5), Correct(1.2)}).ok());  // nodes 3, 4
  const Tree& tree = mcts->tree();
  // ROOT: node 1 at 1.388329 beats the virtual 1.012260. Node 1: its virtual child at 1.909282
  // beats child 3 at 1.887769 and 2 children < 3·√3.
  EXPECT_NEAR(Uct(tree.node(1), 4, kC), 1.388329, 1e-6);
  EXPECT_NEAR(VirtualChildUct(tree.root(), kC), 1.012260, 1e-6);
  EXPECT_NEAR(VirtualChildUct(tree.node(1), kC), 1.909282, 1e-6);
  EXPECT_NEAR(Uct(tree.node(3), 3, kC), 1.887769, 1e-6);
  ExpectSelection(mcts->Next(), 1, PromptMode::kOptimize);
}

TEST(MctsTest, ABetterChildIsDescendedInto) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(2.0), CompileError()}).ok());
  ASSERT_TRUE(ExpandNode(*mcts, 1, {Correct(2.5), Correct(1.2)}).ok());  // nodes 3, 4
  // Node 3 at 2.398595 beats node 1's virtual child at 2.079557.
  EXPECT_NEAR(Uct(mcts->tree().node(3), 3, kC), 2.398595, 1e-6);
  EXPECT_NEAR(VirtualChildUct(mcts->tree().node(1), kC), 2.079557, 1e-6);
  ExpectSelection(mcts->Next(), 3, PromptMode::kOptimize);
}

TEST(MctsTest, AFailedNodeIsTerminalAfterThreeFailedRepairs) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {CompileError(), Correct(1.5)}).ok());
  ASSERT_TRUE(ExpandNode(*mcts, 1, {CompileError(), Failed(eval::EvalStatus::kIncorrect)}).ok());
  EXPECT_FALSE(mcts->tree().node(1).terminal);  // two failed repairs
  ASSERT_TRUE(ExpandNode(*mcts, 1, {Failed(eval::EvalStatus::kRuntimeError)}).ok());
  EXPECT_TRUE(mcts->tree().node(1).terminal);  // three
  EXPECT_FALSE(mcts->tree().root().terminal);
  EXPECT_FALSE(ExpandNode(*mcts, 1, {CompileError()}).ok());  // refused from now on
  // Nothing under node 1 is selected again, however the search goes on.
  ScriptedEnvironment environment(3);
  RunSearch(*mcts, environment, 20, 2, [&](const Selection& s) {
    for (int a = s.node; a > 0; a = mcts->tree().node(a).parent) EXPECT_NE(a, 1);
  });
}

TEST(MctsTest, ACorrectRepairKeepsAFailedNodeAlive) {
  auto mcts = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*mcts, 0, {CompileError()}).ok());
  ASSERT_TRUE(ExpandNode(*mcts, 1, {CompileError(), Correct(0.9)}).ok());
  ASSERT_TRUE(ExpandNode(*mcts, 1, {CompileError(), CompileError()}).ok());
  EXPECT_FALSE(mcts->tree().node(1).terminal);

  MctsOptions off;
  off.terminal_after_failed_repairs = 0;
  auto lenient = NewMctsStrategy(off);
  ASSERT_TRUE(ExpandNode(*lenient, 0, {CompileError()}).ok());
  ASSERT_TRUE(ExpandNode(*lenient, 1, {CompileError(), CompileError(), CompileError()}).ok());
  EXPECT_FALSE(lenient->tree().node(1).terminal);
}

TEST(MctsTest, ExhaustionPropagatesUpwardAndRootIsReExpanded) {
  // Narrow widening so that a working node cannot outgrow its three failed children.
  MctsOptions options;
  options.c_pw_working = 0.5;
  options.c_pw_root = 0.1;
  auto mcts = NewMctsStrategy(options);
  const Tree& tree = mcts->tree();
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(2.0)}).ok());                                    // 1
  ASSERT_TRUE(ExpandNode(*mcts, 1, {CompileError(), CompileError(), CompileError()}).ok());  // 2-4
  for (int failed : {2, 3}) {
    ASSERT_TRUE(ExpandNode(*mcts, failed, {CompileError(), CompileError(), CompileError()}).ok());
    EXPECT_TRUE(tree.node(failed).terminal);
    EXPECT_FALSE(tree.node(1).terminal);  // node 4 is still open
  }
  ExpectSelection(mcts->Next(), 4, PromptMode::kDebug);
  ASSERT_TRUE(ExpandNode(*mcts, 4, {CompileError(), CompileError(), CompileError()}).ok());
  EXPECT_TRUE(tree.node(4).terminal);
  // Node 1 now has no open child and 3 children ≥ 0.5·√13: a dead end as a whole.
  EXPECT_FALSE(CanWiden(tree.node(1), options));
  EXPECT_TRUE(tree.node(1).terminal);
  // Everything below ROOT is terminal: ROOT is expanded again although its own gate is closed.
  EXPECT_FALSE(CanWiden(tree.root(), options));
  EXPECT_FALSE(tree.root().terminal);
  ExpectSelection(mcts->Next(), Tree::kRootId, PromptMode::kInitial);
  // A fresh seed reopens the search.
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(1.1)}).ok());
  EXPECT_EQ(mcts->Next().node, tree.size() - 1);
}

TEST(MctsTest, RebuildingFromAStoredTreeRestoresTerminalFlags) {
  MctsOptions options;
  auto mcts = NewMctsStrategy(options);
  ASSERT_TRUE(ExpandNode(*mcts, 0, {CompileError()}).ok());
  ASSERT_TRUE(ExpandNode(*mcts, 1, {CompileError(), CompileError(), CompileError()}).ok());
  // A tree grown by another strategy carries no flags; MCTS derives them.
  Json json = ToJson(mcts->tree());
  json["nodes"][1]["terminal"] = false;
  auto tree = TreeFromJson(json);
  ASSERT_TRUE(tree.ok());
  auto rebuilt = NewMctsStrategy(options, std::move(tree).value());
  EXPECT_TRUE(rebuilt->tree().node(1).terminal);
  ExpectSelection(rebuilt->Next(), Tree::kRootId, PromptMode::kInitial);
}

// An LLM failure is not the kernel's: the node it hangs under is neither punished nor closed, and
// the search retries the same choice. The iteration is spent all the same.
TEST(MctsTest, AnLlmErrorIsTerminalAndTheSameChoiceIsRetried) {
  auto mcts = NewMctsStrategy({});
  const Tree& tree = mcts->tree();
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(1.5), CompileError()}).ok());  // 1, 2
  const Selection before = mcts->Next();
  const Json statistics_before = ToJson(tree);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const Selection next = mcts->Next();
    ExpectSelection(next, before.node, before.mode);
    EXPECT_EQ(next.expansion, before.expansion + attempt);
    ASSERT_TRUE(mcts->Record(next, {LlmError()}).ok());
    const Node& failed = tree.node(tree.size() - 1);
    EXPECT_TRUE(failed.llm_error());
    EXPECT_TRUE(failed.terminal);
    EXPECT_EQ(failed.visits, 0);
  }
  EXPECT_EQ(tree.expansions(), before.expansion + 4);
  // Every number the selection reads is as it was.
  for (int id : {0, 1, 2}) {
    const Json& was = statistics_before["nodes"][id];
    EXPECT_EQ(tree.node(id).visits, was["visits"].get<int>()) << "node " << id;
    EXPECT_EQ(tree.node(id).total_reward, was["total_reward"].get<double>()) << "node " << id;
    EXPECT_EQ(tree.node(id).terminal, was["terminal"].get<bool>()) << "node " << id;
  }
  testing::ExpectConsistentStatistics(tree);
  // An llm_error node is never selected, and cannot be recorded under.
  const int failed = tree.size() - 1;
  EXPECT_FALSE(ExpandNode(*mcts, failed, {CompileError()}).ok());
}

TEST(MctsTest, LlmErrorsDoNotCloseAFailedNodeOrUseUpItsWidening) {
  MctsOptions options;
  auto mcts = NewMctsStrategy(options);
  const Tree& tree = mcts->tree();
  ASSERT_TRUE(ExpandNode(*mcts, 0, {CompileError()}).ok());  // 1
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ExpandNode(*mcts, 1, {LlmError()}).ok());
  // Three children, none correct, but no repair among them: still open, still widening.
  EXPECT_FALSE(tree.node(1).terminal);
  EXPECT_EQ(tree.node(1).evaluated_children(), 0);
  EXPECT_TRUE(CanWiden(tree.node(1), options));
  ExpectSelection(mcts->Next(), 1, PromptMode::kDebug);
  // Widening and the fair share count evaluated children only.
  Node stats = Stats(NodeKind::kRoot, 4, 0, 4);
  EXPECT_FALSE(CanWiden(stats, options));
  stats.llm_error_children = 1;
  EXPECT_TRUE(CanWiden(stats, options));
  EXPECT_DOUBLE_EQ(VirtualChildUct(stats, kC),
                   VirtualChildUct(Stats(NodeKind::kRoot, 4, 0, 3), kC));
}

TEST(MctsTest, AScriptedSearchWithLlmFailuresKeepsItsInvariantsAndResumes) {
  MctsOptions options;
  auto mcts = NewMctsStrategy(options);
  ScriptedEnvironment environment(21);
  for (int t = 0; t < 40; ++t) {
    const Selection selection = mcts->Next();
    ASSERT_FALSE(mcts->tree().node(selection.node).llm_error());
    ASSERT_FALSE(mcts->tree().node(selection.node).terminal);
    std::vector<CandidateOutcome> outcomes = t % 3 == 1
                                                 ? std::vector<CandidateOutcome>{LlmError()}
                                                 : environment.Evaluate(mcts->tree(), selection, 2);
    ASSERT_TRUE(mcts->Record(selection, outcomes).ok());
  }
  testing::ExpectConsistentStatistics(mcts->tree());
  int llm_errors = 0;
  for (const Node& node : mcts->tree().nodes()) llm_errors += node.llm_error() ? 1 : 0;
  EXPECT_EQ(llm_errors, 13);
  EXPECT_EQ(mcts->tree().root().visits, 2 * 27);  // only evaluated candidates are visits
  auto stored = TreeFromJson(Json::parse(DumpJson(ToJson(mcts->tree()))));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  auto resumed = NewMctsStrategy(options, std::move(stored).value());
  EXPECT_EQ(resumed->Next().node, mcts->Next().node);
  EXPECT_EQ(DumpJson(ToJson(resumed->tree())), DumpJson(ToJson(mcts->tree())));
}

TEST(MctsTest, BestNodeIsTheGlobalBest) {
  auto mcts = NewMctsStrategy({});
  EXPECT_EQ(mcts->BestNode(), std::nullopt);
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(1.2), CompileError()}).ok());
  ASSERT_TRUE(ExpandNode(*mcts, 1, {Correct(3.0)}).ok());  // 3
  ASSERT_TRUE(ExpandNode(*mcts, 3, {Correct(2.0)}).ok());  // 4: newer, slower
  ASSERT_TRUE(ExpandNode(*mcts, 0, {Correct(1.5)}).ok());  // 5: another seed
  EXPECT_EQ(mcts->BestNode(), 3);
}

TEST(MctsTest, EachRecordIsAppliedExactlyOnce) {
  auto mcts = NewMctsStrategy({});
  Selection first = mcts->Next();
  EXPECT_EQ(mcts->Next().expansion, first.expansion);  // Next changes nothing
  ASSERT_TRUE(mcts->Record(first, {Correct(1.3), CompileError()}).ok());
  const std::string after = DumpJson(ToJson(mcts->tree()));
  Status again = mcts->Record(first, {Correct(1.3), CompileError()});
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("recorded twice"), std::string::npos);
  Selection wrong_mode = mcts->Next();
  wrong_mode.mode = PromptMode::kDebug;  // node 1 is working
  EXPECT_FALSE(mcts->Record(wrong_mode, {Correct(1.0)}).ok());
  EXPECT_FALSE(mcts->Record(mcts->Next(), {}).ok());
  EXPECT_EQ(DumpJson(ToJson(mcts->tree())), after);
}

// A 30-iteration search, 2 candidates each (the paper's budget), checking every selection and the
// final tree; returns the modes it used.
std::set<PromptMode> SearchCheckingInvariants(SearchStrategy& mcts, const MctsOptions& options,
                                              ScriptedEnvironment& environment) {
  const Tree& tree = mcts.tree();
  std::set<PromptMode> modes;
  int t = 0;
  RunSearch(mcts, environment, 30, 2, [&](const Selection& s) {
    const Node& node = tree.node(s.node);
    EXPECT_EQ(s.expansion, t++);
    EXPECT_FALSE(node.terminal) << "selected terminal node " << s.node;
    for (int a = node.parent; a > 0; a = tree.node(a).parent) EXPECT_FALSE(tree.node(a).terminal);
    EXPECT_EQ(s.mode, ModeFor(node.kind));
    bool open_child = false;
    for (int child : node.children) open_child = open_child || !tree.node(child).terminal;
    // Expanding needs the widening gate, except at ROOT with nothing open below it.
    if (!node.is_root() || open_child) {
      EXPECT_TRUE(CanWiden(node, options)) << "node " << s.node;
    }
    modes.insert(s.mode);
  });
  EXPECT_EQ(tree.expansions(), 30);
  EXPECT_EQ(tree.size(), 61);
  // Backpropagation: ROOT saw every candidate and holds the sum of their rewards.
  double rewards = 0;
  for (const Node& node : tree.nodes()) rewards += node.reward;
  EXPECT_EQ(tree.root().visits, 60);
  EXPECT_NEAR(tree.root().total_reward, rewards, 1e-9);
  testing::ExpectConsistentStatistics(tree);
  // Every terminal flag is justified, and no open node is stuck.
  for (const Node& node : tree.nodes()) {
    if (node.is_root()) continue;
    bool open_child = false, correct_child = false;
    for (int child : node.children) {
      open_child = open_child || !tree.node(child).terminal;
      correct_child = correct_child || tree.node(child).correct();
    }
    bool failed_repairs =
        node.kind == NodeKind::kFailed && node.evaluated_children() >= 3 && !correct_child;
    bool stuck = !open_child && !CanWiden(node, options);
    EXPECT_EQ(node.terminal, failed_repairs || stuck) << "node " << node.id;
  }
  return modes;
}

TEST(MctsTest, AScriptedSearchOnAnOrdinaryProblemKeepsItsInvariants) {
  MctsOptions options;
  auto mcts = NewMctsStrategy(options);
  ScriptedEnvironment environment(14);
  std::set<PromptMode> modes = SearchCheckingInvariants(*mcts, options, environment);
  EXPECT_EQ(modes.size(), 3u);  // fresh seeds, repairs and refinements all happened
  ASSERT_TRUE(mcts->BestNode().has_value());
  EXPECT_GT(mcts->tree().node(*mcts->BestNode()).depth, 1);  // refinement paid off
}

TEST(MctsTest, AScriptedSearchOnAHardProblemPrunesDeadEnds) {
  // Seeds rarely work and repairs never do: dead ends must be pruned and never selected again.
  MctsOptions options;
  auto mcts = NewMctsStrategy(options);
  ScriptedEnvironment environment(2, /*seed_success=*/0.05, /*repair_success=*/0.0);
  SearchCheckingInvariants(*mcts, options, environment);
  int terminal = 0;
  for (const Node& node : mcts->tree().nodes()) terminal += node.terminal ? 1 : 0;
  EXPECT_GE(terminal, 2);
}

std::string SearchJson(std::uint64_t environment_seed, const MctsOptions& options,
                       int iterations = 30) {
  auto mcts = NewMctsStrategy(options);
  ScriptedEnvironment environment(environment_seed);
  RunSearch(*mcts, environment, iterations);
  return DumpJson(ToJson(mcts->tree()));
}

TEST(MctsTest, TheSameOutcomesGiveTheSameTree) {
  MctsOptions options;
  options.seed = 42;
  EXPECT_EQ(SearchJson(5, options), SearchJson(5, options));
  EXPECT_NE(SearchJson(5, options), SearchJson(6, options));  // the outcomes do steer it
  MctsOptions other_seed = options;
  other_seed.seed = 43;
  EXPECT_EQ(SearchJson(5, options), SearchJson(5, other_seed));  // the seed is not consumed
}

TEST(MctsTest, AResumedSearchContinuesExactlyWhereItStopped) {
  MctsOptions options;
  const std::string uninterrupted = SearchJson(9, options);

  auto first = NewMctsStrategy(options);
  ScriptedEnvironment environment(9);
  RunSearch(*first, environment, 12);
  const Selection pending = first->Next();
  // What the run store keeps, as text.
  auto stored = TreeFromJson(Json::parse(DumpJson(ToJson(first->tree()))));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  auto resumed = NewMctsStrategy(options, std::move(stored).value());
  Selection again = resumed->Next();
  EXPECT_EQ(again.node, pending.node);
  EXPECT_EQ(again.mode, pending.mode);
  EXPECT_EQ(again.expansion, pending.expansion);
  RunSearch(*resumed, environment, 18);
  EXPECT_EQ(DumpJson(ToJson(resumed->tree())), uninterrupted);
}

TEST(MctsTest, TheEnergyAwareRewardIsUsedWhenAsked) {
  MctsOptions options;
  options.energy_epsilon = 0.01;
  auto mcts = NewMctsStrategy(options);
  CandidateOutcome frugal = Correct(2.0);
  frugal.energy_reduction = std::exp(1.0);
  ASSERT_TRUE(ExpandNode(*mcts, 0, {frugal}).ok());
  EXPECT_NEAR(mcts->tree().node(1).reward, std::log(2.0) + 0.01, 1e-12);
  auto plain = NewMctsStrategy({});
  ASSERT_TRUE(ExpandNode(*plain, 0, {frugal}).ok());
  EXPECT_DOUBLE_EQ(plain->tree().node(1).reward, std::log(2.0));
}

}  // namespace search_mcts_test
}  // namespace kernelpro::search
