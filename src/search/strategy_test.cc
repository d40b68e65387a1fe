// The pieces every strategy shares: the mode a node is expanded in, and the checks that make each
// Record apply once and only to the node it was made for.
#include "search/strategy.h"

#include <gtest/gtest.h>

#include "search/search_testing.h"

namespace kernelpro::search {
namespace search_strategy_test {

using agents::PromptMode;
using testing::CompileError;
using testing::Correct;

TEST(StrategyTest, TheModeFollowsTheNodeKind) {
  EXPECT_EQ(ModeFor(NodeKind::kRoot), PromptMode::kInitial);
  EXPECT_EQ(ModeFor(NodeKind::kFailed), PromptMode::kDebug);
  EXPECT_EQ(ModeFor(NodeKind::kWorking), PromptMode::kOptimize);
}

TEST(StrategyTest, ParentIsNoneOnlyForRoot) {
  EXPECT_EQ(Selection{}.parent(), std::nullopt);
  EXPECT_EQ((Selection{4, PromptMode::kDebug, 2}.parent()), 4);
}

TEST(StrategyTest, CheckSelectionRefusesWhatDoesNotFitTheTree) {
  Tree tree;
  ASSERT_TRUE(tree.AddExpansion(Tree::kRootId, PromptMode::kInitial, {CompileError(), Correct(1.2)},
                                {-3.0, 0.18})
                  .ok());
  const std::vector<CandidateOutcome> one = {Correct(1.0)};
  EXPECT_TRUE(CheckSelection(tree, {1, PromptMode::kDebug, 1}, one).ok());
  EXPECT_TRUE(CheckSelection(tree, {2, PromptMode::kOptimize, 1}, one).ok());
  EXPECT_TRUE(CheckSelection(tree, {0, PromptMode::kInitial, 1}, one).ok());

  Status repeated = CheckSelection(tree, {1, PromptMode::kDebug, 0}, one);
  EXPECT_NE(repeated.message().find("recorded twice, or stale"), std::string::npos);
  EXPECT_FALSE(CheckSelection(tree, {1, PromptMode::kDebug, 2}, one).ok());
  EXPECT_NE(CheckSelection(tree, {9, PromptMode::kDebug, 1}, one).message().find("no node 9"),
            std::string::npos);
  EXPECT_NE(CheckSelection(tree, {1, PromptMode::kOptimize, 1}, one).message().find("does not fit"),
            std::string::npos);
  EXPECT_FALSE(CheckSelection(tree, {1, PromptMode::kDebug, 1}, {}).ok());
  tree.MarkTerminal(1);
  EXPECT_NE(CheckSelection(tree, {1, PromptMode::kDebug, 1}, one).message().find("terminal"),
            std::string::npos);
}

}  // namespace search_strategy_test
}  // namespace kernelpro::search
