// The search tree: attaching expansions with backpropagation, the global best, the noise-aware
// comparison, and the exact JSON round trip a resumed run depends on.
#include "search/tree.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "search/search_testing.h"

namespace kernelpro::search {
namespace search_tree_test {

using agents::PromptMode;
using testing::CompileError;
using testing::Correct;
using testing::Failed;

TEST(TreeTest, ANewTreeIsABareRoot) {
  Tree tree;
  ASSERT_EQ(tree.size(), 1);
  EXPECT_TRUE(tree.root().is_root());
  EXPECT_EQ(tree.root().parent, -1);
  EXPECT_EQ(tree.root().visits, 0);
  EXPECT_EQ(tree.expansions(), 0);
  EXPECT_EQ(tree.BestNode(), std::nullopt);
}

TEST(TreeTest, AnExpansionAttachesChildrenAndBackpropagatesToRoot) {
  Tree tree;
  auto seeds = tree.AddExpansion(Tree::kRootId, PromptMode::kInitial,
                                 {CompileError(), Correct(2.0)}, {-3.0, 0.7});
  ASSERT_TRUE(seeds.ok());
  EXPECT_EQ(*seeds, (std::vector<int>{1, 2}));
  auto repairs =
      tree.AddExpansion(1, PromptMode::kDebug,
                        {Failed(eval::EvalStatus::kIncorrect, 0.5), Correct(1.1)}, {-2.0, 0.1});
  ASSERT_TRUE(repairs.ok());
  EXPECT_EQ(*repairs, (std::vector<int>{3, 4}));

  EXPECT_EQ(tree.expansions(), 2);
  EXPECT_EQ(tree.root().children, (std::vector<int>{1, 2}));
  EXPECT_EQ(tree.node(1).children, (std::vector<int>{3, 4}));
  EXPECT_EQ(tree.node(1).kind, NodeKind::kFailed);
  EXPECT_EQ(tree.node(2).kind, NodeKind::kWorking);
  EXPECT_EQ(tree.node(3).kind, NodeKind::kFailed);
  EXPECT_EQ(tree.node(4).depth, 2);
  EXPECT_EQ(tree.node(4).mode, PromptMode::kDebug);
  EXPECT_EQ(tree.node(4).expansion, 1);
  EXPECT_EQ(tree.node(2).expansion, 0);

  EXPECT_EQ(tree.root().visits, 4);
  EXPECT_DOUBLE_EQ(tree.root().total_reward, -3.0 + 0.7 - 2.0 + 0.1);
  EXPECT_EQ(tree.node(1).visits, 3);
  EXPECT_DOUBLE_EQ(tree.node(1).total_reward, -3.0 - 2.0 + 0.1);
  EXPECT_DOUBLE_EQ(tree.node(1).MeanReward(), -4.9 / 3);
  EXPECT_EQ(tree.node(4).visits, 1);
  testing::ExpectConsistentStatistics(tree);
}

TEST(TreeTest, ABadExpansionLeavesTheTreeAlone) {
  Tree tree;
  EXPECT_FALSE(tree.AddExpansion(5, PromptMode::kDebug, {CompileError()}, {-3.0}).ok());
  EXPECT_FALSE(tree.AddExpansion(Tree::kRootId, PromptMode::kInitial, {}, {}).ok());
  EXPECT_FALSE(
      tree.AddExpansion(Tree::kRootId, PromptMode::kInitial, {CompileError()}, {-3.0, 1.0}).ok());
  EXPECT_EQ(tree.size(), 1);
  EXPECT_EQ(tree.expansions(), 0);
}

TEST(TreeTest, NonFiniteMeasurementsAreKeptAsUnknown) {
  Tree tree;
  CandidateOutcome nan_error = Failed(eval::EvalStatus::kIncorrect, std::nan(""));
  nan_error.energy_reduction = std::numeric_limits<double>::infinity();
  CandidateOutcome nan_speedup = Correct(1.0);
  nan_speedup.speedup->high = std::nan("");
  ASSERT_TRUE(
      tree.AddExpansion(Tree::kRootId, PromptMode::kInitial, {nan_error, nan_speedup}, {-2, 0})
          .ok());
  EXPECT_EQ(tree.node(1).error_magnitude, std::nullopt);
  EXPECT_EQ(tree.node(1).energy_reduction, std::nullopt);
  EXPECT_FALSE(tree.node(2).speedup.has_value());
  EXPECT_FALSE(tree.AddExpansion(1, PromptMode::kDebug, {CompileError()}, {std::nan("")}).ok());
  auto back = TreeFromJson(ToJson(tree));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(DumpJson(ToJson(*back)), DumpJson(ToJson(tree)));
}

TEST(TreeTest, BestNodeIsTheFastestKernelShownFasterThanTheReferenceAnywhere) {
  Tree tree;
  ASSERT_TRUE(tree.AddExpansion(Tree::kRootId, PromptMode::kInitial,
                                {Failed(eval::EvalStatus::kIncorrect, 0.1), CompileError()},
                                {-2, -3})
                  .ok());
  EXPECT_EQ(tree.BestNode(), std::nullopt);
  // A correct node without timing is a solution, but not shown faster than the reference: the
  // reference stays the answer (search/best_rule.h).
  CandidateOutcome untimed;
  untimed.status = eval::EvalStatus::kCorrect;
  ASSERT_TRUE(tree.AddExpansion(1, PromptMode::kDebug, {untimed}, {0}).ok());  // node 3
  EXPECT_EQ(tree.BestNode(), std::nullopt);
  EXPECT_EQ(tree.FastestCorrectNode(), 3);
  ASSERT_TRUE(tree.AddExpansion(3, PromptMode::kOptimize, {Correct(1.5), Correct(2.5)}, {0.4, 0.9})
                  .ok());  // nodes 4, 5
  ASSERT_TRUE(tree.AddExpansion(4, PromptMode::kOptimize, {Correct(2.5)}, {0.9}).ok());  // node 6
  // A wrong kernel's partial speedup does not count.
  CandidateOutcome fast_wrong = Failed(eval::EvalStatus::kIncorrect);
  fast_wrong.speedup = testing::Point(40.0);
  ASSERT_TRUE(tree.AddExpansion(6, PromptMode::kOptimize, {fast_wrong}, {-2}).ok());
  EXPECT_EQ(tree.BestNode(), 5);  // 5 and 6 tie at 2.5x: the earlier wins
  ASSERT_TRUE(tree.AddExpansion(6, PromptMode::kOptimize, {Correct(2.6)}, {0.95}).ok());
  EXPECT_EQ(tree.BestNode(), 8);  // three levels down
}

// --energy aware: energy decides between kernels the harness cannot tell apart, never against a
// resolvable speedup.
TEST(TreeTest, AwareBestIsTheFrugalestOfTheKernelsAsFastAsTheFastest) {
  auto kernel = [](double estimate, double low, double high, double energy_reduction) {
    CandidateOutcome c = Correct(estimate);
    c.speedup = RatioInterval{estimate, low, high, 0.95};
    c.energy_reduction = energy_reduction;
    return c;
  };
  Tree tree;
  ASSERT_TRUE(tree.AddExpansion(Tree::kRootId, PromptMode::kInitial,
                                {kernel(2.29, 2.26, 2.31, 2.69), kernel(2.31, 2.26, 2.33, 2.65),
                                 kernel(2.10, 2.05, 2.15, 9.0)},
                                {0.8, 0.8, 0.7})
                  .ok());  // nodes 1, 2, 3
  EXPECT_EQ(tree.FastestNode(), 2);
  EXPECT_EQ(tree.BestNode(), 1) << "n1 cannot be told apart from n2 and spends less";
  // n3 saves the most but is clearly slower: never the best.
  // A kernel clearly faster than all of them wins whatever it spends.
  ASSERT_TRUE(tree.AddExpansion(1, PromptMode::kOptimize, {kernel(2.60, 2.55, 2.65, 1.0)}, {0.9})
                  .ok());  // node 4
  EXPECT_EQ(tree.BestNode(), 4);
  // Without energy (off, measure) the best is the fastest.
  Tree plain;
  ASSERT_TRUE(plain
                  .AddExpansion(Tree::kRootId, PromptMode::kInitial, {Correct(2.29), Correct(2.31)},
                                {0.8, 0.8})
                  .ok());
  EXPECT_EQ(plain.BestNode(), 2);
}

TEST(TreeTest, ClearlyFasterNeedsDisjointIntervals) {
  RatioInterval parent{2.0, 1.9, 2.1, 0.95};
  EXPECT_TRUE(ClearlyFaster({2.3, 2.15, 2.4, 0.95}, parent));
  EXPECT_FALSE(ClearlyFaster({2.3, 2.05, 2.4, 0.95}, parent));  // overlaps: may be noise
  EXPECT_FALSE(ClearlyFaster({2.1, 2.1, 2.1, 0}, parent));      // touching is not clear
  EXPECT_FALSE(ClearlyFaster(parent, {2.3, 2.15, 2.4, 0.95}));
  EXPECT_TRUE(ClearlyFaster(testing::Point(1.01), testing::Point(1.0)));
}

TEST(TreeTest, ANoisyIntervalIsNeverClearlyFaster) {
  // The interval of the run: 1.24x [0.53, 1.97] spans 116 % of its estimate.
  EXPECT_FALSE(ClearlyFaster({1.24, 0.53, 1.97, 0.95}, testing::Point(0.5)));
  // Far above its parent, but 60 % wide: a rerun could land anywhere in it.
  EXPECT_FALSE(ClearlyFaster({5.0, 3.5, 6.5, 0.95}, {1.0, 0.9, 1.1, 0.95}));
  // 40 % wide and disjoint: accepted.
  EXPECT_TRUE(ClearlyFaster({5.0, 4.0, 6.0, 0.95}, {1.0, 0.9, 1.1, 0.95}));
}

Tree RichTree() {
  Tree tree;
  CandidateOutcome seed = Correct(1.0);
  seed.speedup = RatioInterval{1.0 / 3.0, 0.1 + 0.2, 0.37, 0.95};  // no short decimal forms
  seed.candidate = "cand-0001";
  seed.energy_reduction = 1.0 / 7.0;
  CandidateOutcome wrong = Failed(eval::EvalStatus::kIncorrect, 2.5e-3);
  wrong.candidate = "cand-0002 \"quoted\" ünïcode";
  EXPECT_TRUE(tree.AddExpansion(Tree::kRootId, PromptMode::kInitial,
                                {seed, wrong, Failed(eval::EvalStatus::kTimeout)},
                                {std::log(1.0 / 3.0), -2.0, -3.0})
                  .ok());
  EXPECT_TRUE(
      tree.AddExpansion(2, PromptMode::kDebug,
                        {CompileError(), Failed(eval::EvalStatus::kRuntimeError), CompileError()},
                        {-3, -3, -3})
          .ok());
  EXPECT_TRUE(tree.AddExpansion(1, PromptMode::kOptimize, {Correct(0.7)}, {std::log(0.7)}).ok());
  tree.MarkTerminal(2);
  return tree;
}

TEST(TreeTest, JsonRoundTripIsExact) {
  Tree tree = RichTree();
  Json json = ToJson(tree);
  auto back = TreeFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DumpJson(ToJson(*back)), DumpJson(json));
  // And through text, as the run store keeps it.
  auto reparsed = TreeFromJson(Json::parse(DumpJson(json, 2)));
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  EXPECT_EQ(DumpJson(ToJson(*reparsed)), DumpJson(json));

  ASSERT_EQ(reparsed->size(), tree.size());
  EXPECT_EQ(reparsed->expansions(), 3);
  for (int id = 0; id < tree.size(); ++id) {
    const Node& a = tree.node(id);
    const Node& b = reparsed->node(id);
    EXPECT_EQ(a.parent, b.parent);
    EXPECT_EQ(a.children, b.children);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.candidate, b.candidate);
    EXPECT_EQ(a.reward, b.reward);  // bit-exact, not approximately
    EXPECT_EQ(a.total_reward, b.total_reward);
    EXPECT_EQ(a.visits, b.visits);
    EXPECT_EQ(a.terminal, b.terminal);
    EXPECT_EQ(a.error_magnitude, b.error_magnitude);
    EXPECT_EQ(a.energy_reduction, b.energy_reduction);
    ASSERT_EQ(a.speedup.has_value(), b.speedup.has_value());
    if (a.speedup) {
      EXPECT_EQ(a.speedup->estimate, b.speedup->estimate);
      EXPECT_EQ(a.speedup->low, b.speedup->low);
      EXPECT_EQ(a.speedup->high, b.speedup->high);
      EXPECT_EQ(a.speedup->confidence, b.speedup->confidence);
    }
  }
  EXPECT_TRUE(reparsed->node(2).terminal);
  EXPECT_EQ(reparsed->node(1).speedup->estimate, 1.0 / 3.0);
}

// The LLM failed: the child records it, but it was never evaluated, so it has no visit, no reward
// and no say in its ancestors' statistics; the expansion still counts.
TEST(TreeTest, AnLlmErrorChildIsTerminalAndLeavesTheStatisticsAlone) {
  Tree tree;
  ASSERT_TRUE(tree.AddExpansion(Tree::kRootId, PromptMode::kInitial, {Correct(2.0)}, {0.7}).ok());
  auto failed = tree.AddExpansion(1, PromptMode::kOptimize, {testing::LlmError()}, {-3.0});
  ASSERT_TRUE(failed.ok()) << failed.status().ToString();
  const Node& node = tree.node((*failed)[0]);
  EXPECT_EQ(node.kind, NodeKind::kLlmError);
  EXPECT_EQ(node.status, eval::EvalStatus::kLlmError);
  EXPECT_TRUE(node.terminal);
  EXPECT_EQ(node.visits, 0);
  EXPECT_EQ(node.reward, 0.0);  // whatever reward it was given
  EXPECT_EQ(tree.expansions(), 2);
  EXPECT_EQ(tree.node(1).visits, 1);
  EXPECT_DOUBLE_EQ(tree.node(1).total_reward, 0.7);
  EXPECT_EQ(tree.root().visits, 1);
  EXPECT_EQ(tree.node(1).children.size(), 1u);
  EXPECT_EQ(tree.node(1).evaluated_children(), 0);
  testing::ExpectConsistentStatistics(tree);

  // A resumed run reads it back as it was, with the derived count.
  const Json json = ToJson(tree);
  EXPECT_EQ(json["nodes"][2]["kind"], "llm_error");
  EXPECT_EQ(json["nodes"][2]["status"], "llm_error");
  auto back = TreeFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DumpJson(ToJson(*back)), DumpJson(json));
  EXPECT_EQ(back->node(1).evaluated_children(), 0);
  EXPECT_EQ(back->node(1).llm_error_children, 1);

  Json damaged = json;
  damaged["nodes"][2]["visits"] = 1;
  damaged["nodes"][1]["visits"] = 2;
  damaged["nodes"][0]["visits"] = 2;
  EXPECT_FALSE(TreeFromJson(damaged).ok());  // an llm_error node has no visit of its own
  damaged = json;
  damaged["nodes"][2]["kind"] = "failed";
  EXPECT_FALSE(TreeFromJson(damaged).ok());
}

TEST(TreeTest, ADamagedTreeIsAnError) {
  const Json good = ToJson(RichTree());
  auto message = [](const Json& json) {
    auto tree = TreeFromJson(json);
    return tree.ok() ? std::string("ok") : tree.status().message();
  };
  EXPECT_EQ(message(good), "ok");

  Json json = good;
  json["version"] = 2;
  EXPECT_NE(message(json).find("unsupported version"), std::string::npos);
  json = good;
  json["nodes"][4]["parent"] = 6;
  EXPECT_NE(message(json).find("node 4: parent 6 is not an earlier node"), std::string::npos);
  json = good;
  json["nodes"][3]["kind"] = "working";  // a timeout cannot be a working node
  EXPECT_NE(message(json).find("kind does not match status"), std::string::npos);
  json = good;
  json["nodes"][2]["visits"] = 2;
  EXPECT_NE(message(json).find("visits"), std::string::npos);
  json = good;
  json["nodes"][5]["id"] = 9;
  EXPECT_NE(message(json).find("out of order"), std::string::npos);
  json = good;
  json["nodes"][5]["status"] = "exploded";
  EXPECT_NE(message(json).find("unknown status"), std::string::npos);
  json = good;
  json["nodes"][5]["depth"] = 1;
  EXPECT_NE(message(json).find("wrong depth"), std::string::npos);
  json = good;
  json["nodes"][1]["speedup"]["low"] = "fast";
  EXPECT_NE(message(json).find("speedup.low"), std::string::npos);
  EXPECT_FALSE(TreeFromJson(Json::array()).ok());
  EXPECT_FALSE(
      TreeFromJson(Json{{"version", 1}, {"expansions", 0}, {"nodes", Json::array()}}).ok());
}

}  // namespace search_tree_test
}  // namespace kernelpro::search
