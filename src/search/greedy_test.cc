// The greedy baseline (paper appendix E): it always expands the best node, repairs the failed
// candidate closest to working when nothing works, and restarts from ROOT after consecutive
// failures.
#include "search/greedy.h"

#include <gtest/gtest.h>

#include "search/search_testing.h"

namespace kernelpro::search {
namespace search_greedy_test {

using agents::PromptMode;
using testing::CompileError;
using testing::Correct;
using testing::ExpandNode;
using testing::Failed;
using testing::RunSearch;
using testing::ScriptedEnvironment;

void ExpectSelection(const Selection& selection, int node, PromptMode mode) {
  EXPECT_EQ(selection.node, node);
  EXPECT_EQ(selection.mode, mode);
}

Node FailedNode(int id, eval::EvalStatus status, std::optional<double> error = std::nullopt,
                std::optional<double> speedup = std::nullopt) {
  Node node;
  node.id = id;
  node.kind = NodeKind::kFailed;
  node.status = status;
  node.error_magnitude = error;
  if (speedup) node.speedup = testing::Point(*speedup);
  return node;
}

TEST(GreedyTest, TheFirstSelectionWritesFreshSeeds) {
  auto greedy = NewGreedyStrategy({});
  ExpectSelection(greedy->Next(), Tree::kRootId, PromptMode::kInitial);
  EXPECT_STREQ(greedy->name(), "greedy");
  EXPECT_FALSE(greedy->Exhausted());
}

TEST(GreedyTest, ItAlwaysExpandsTheBestNode) {
  auto greedy = NewGreedyStrategy({});
  ASSERT_TRUE(ExpandNode(*greedy, 0, {Correct(1.2), Correct(1.5), CompileError()}).ok());
  Selection next = greedy->Next();
  ExpectSelection(next, 2, PromptMode::kOptimize);
  ASSERT_TRUE(greedy->Record(next, {Correct(2.0), Correct(1.4)}).ok());  // 4, 5
  ExpectSelection(greedy->Next(), 4, PromptMode::kOptimize);
  ASSERT_TRUE(greedy->Record(greedy->Next(), {Correct(1.9)}).ok());  // slower: 4 stays best
  ExpectSelection(greedy->Next(), 4, PromptMode::kOptimize);
  ASSERT_TRUE(greedy->Record(greedy->Next(), {Correct(2.0)}).ok());  // a tie: the earlier stays
  ExpectSelection(greedy->Next(), 4, PromptMode::kOptimize);
  EXPECT_EQ(greedy->BestNode(), 4);
}

TEST(GreedyTest, AnyCorrectNodeComesBeforeRepairs) {
  auto greedy = NewGreedyStrategy({});
  ASSERT_TRUE(
      ExpandNode(*greedy, 0, {Failed(eval::EvalStatus::kIncorrect, 0.0), Correct(0.3)}).ok());
  ExpectSelection(greedy->Next(), 2, PromptMode::kOptimize);
}

TEST(GreedyTest, RepairPriorityIsStageThenErrorThenSpeedup) {
  // Execution stage: wrong output > runtime error = timeout > compile error.
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kIncorrect),
                                   FailedNode(1, eval::EvalStatus::kRuntimeError)));
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kRuntimeError),
                                   FailedNode(1, eval::EvalStatus::kCompileError)));
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kTimeout),
                                   FailedNode(1, eval::EvalStatus::kCompileError)));
  EXPECT_TRUE(HigherRepairPriority(FailedNode(1, eval::EvalStatus::kTimeout),
                                   FailedNode(5, eval::EvalStatus::kRuntimeError)));  // same stage
  EXPECT_FALSE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kTimeout),
                                    FailedNode(1, eval::EvalStatus::kRuntimeError)));
  // The stage outranks a small error.
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kIncorrect, 1e3),
                                   FailedNode(1, eval::EvalStatus::kRuntimeError, 1e-9)));
  // Within a stage: the smaller error, a known error before an unknown one.
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kIncorrect, 0.01),
                                   FailedNode(1, eval::EvalStatus::kIncorrect, 0.5)));
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kIncorrect, 0.5),
                                   FailedNode(1, eval::EvalStatus::kIncorrect)));
  // Then the higher partial speedup, and the error still outranks it.
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kIncorrect, 0.1, 3.0),
                                   FailedNode(1, eval::EvalStatus::kIncorrect, 0.1, 1.0)));
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kIncorrect, 0.1, 1.0),
                                   FailedNode(1, eval::EvalStatus::kIncorrect, 0.1)));
  EXPECT_TRUE(HigherRepairPriority(FailedNode(5, eval::EvalStatus::kIncorrect, 0.1, 1.0),
                                   FailedNode(1, eval::EvalStatus::kIncorrect, 0.2, 9.0)));
  // Then the earlier node.
  EXPECT_TRUE(HigherRepairPriority(FailedNode(1, eval::EvalStatus::kIncorrect, 0.1),
                                   FailedNode(5, eval::EvalStatus::kIncorrect, 0.1)));
}

TEST(GreedyTest, WithNothingCorrectItRepairsTheClosestCandidate) {
  GreedyOptions no_restart;  // three failed expansions in a row would restart (tested below)
  no_restart.restart_after_failures = 0;
  auto greedy = NewGreedyStrategy(no_restart);
  ASSERT_TRUE(ExpandNode(*greedy, 0,
                         {CompileError(), Failed(eval::EvalStatus::kRuntimeError),
                          Failed(eval::EvalStatus::kIncorrect, 0.5),
                          Failed(eval::EvalStatus::kIncorrect, 0.01)})
                  .ok());
  ExpectSelection(greedy->Next(), 4, PromptMode::kDebug);
  // Its repairs get worse (compile errors): node 4 stays the target.
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError(), CompileError()}).ok());
  ExpectSelection(greedy->Next(), 4, PromptMode::kDebug);
  // A repair that gets closer takes over.
  ASSERT_TRUE(
      greedy->Record(greedy->Next(), {Failed(eval::EvalStatus::kIncorrect, 0.001)}).ok());  // 7
  ExpectSelection(greedy->Next(), 7, PromptMode::kDebug);
}

TEST(GreedyTest, ItRestartsAfterConsecutiveFailures) {
  auto greedy = NewGreedyStrategy({});                                       // restart after 3
  ASSERT_TRUE(ExpandNode(*greedy, 0, {Correct(1.5), CompileError()}).ok());  // 1, 2
  for (int failures = 1; failures <= 3; ++failures) {
    Selection next = greedy->Next();
    ExpectSelection(next, 1, PromptMode::kOptimize);
    ASSERT_TRUE(
        greedy->Record(next, {CompileError(), Failed(eval::EvalStatus::kRuntimeError)}).ok());
  }
  ExpectSelection(greedy->Next(), Tree::kRootId, PromptMode::kInitial);
  // The restart's seeds form a new attempt: greedy works on them, not on the old best, which
  // remains the global best.
  ASSERT_TRUE(
      greedy->Record(greedy->Next(), {CompileError(), Failed(eval::EvalStatus::kIncorrect, 0.2)})
          .ok());  // 9, 10
  ExpectSelection(greedy->Next(), 10, PromptMode::kDebug);
  EXPECT_EQ(greedy->BestNode(), 1);
  // The failed restart counts: two more failures make three, and it starts afresh again.
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ExpectSelection(greedy->Next(), 10, PromptMode::kDebug);
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ExpectSelection(greedy->Next(), Tree::kRootId, PromptMode::kInitial);
}

// The LLM failing is no failure of the attempt: the same node is retried, and no restart follows.
TEST(GreedyTest, LlmErrorsAreRetriedAndNeverCountAsFailures) {
  auto greedy = NewGreedyStrategy({});                                       // restart after 3
  ASSERT_TRUE(ExpandNode(*greedy, 0, {Correct(1.5), CompileError()}).ok());  // 1, 2
  for (int attempt = 0; attempt < 5; ++attempt) {
    Selection next = greedy->Next();
    ExpectSelection(next, 1, PromptMode::kOptimize);
    ASSERT_TRUE(greedy->Record(next, {testing::LlmError()}).ok());
  }
  ExpectSelection(greedy->Next(), 1, PromptMode::kOptimize);
  EXPECT_EQ(greedy->tree().expansions(), 6);
  // Two real failures and more LLM errors between them still make only two.
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ASSERT_TRUE(greedy->Record(greedy->Next(), {testing::LlmError()}).ok());
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ExpectSelection(greedy->Next(), 1, PromptMode::kOptimize);
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ExpectSelection(greedy->Next(), Tree::kRootId, PromptMode::kInitial);
}

TEST(GreedyTest, ACorrectCandidateResetsTheFailureCount) {
  auto greedy = NewGreedyStrategy({});
  ASSERT_TRUE(ExpandNode(*greedy, 0, {Correct(1.5)}).ok());
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ASSERT_TRUE(greedy->Record(greedy->Next(), {Correct(1.1), CompileError()}).ok());  // slower
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ExpectSelection(greedy->Next(), 1, PromptMode::kOptimize);  // two in a row, not three
  ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ExpectSelection(greedy->Next(), Tree::kRootId, PromptMode::kInitial);
}

TEST(GreedyTest, RestartsCanBeTurnedOff) {
  GreedyOptions options;
  options.restart_after_failures = 0;
  auto greedy = NewGreedyStrategy(options);
  ASSERT_TRUE(ExpandNode(*greedy, 0, {Correct(1.5)}).ok());
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(greedy->Record(greedy->Next(), {CompileError()}).ok());
  ExpectSelection(greedy->Next(), 1, PromptMode::kOptimize);
}

TEST(GreedyTest, EachRecordIsAppliedExactlyOnce) {
  auto greedy = NewGreedyStrategy({});
  Selection first = greedy->Next();
  ASSERT_TRUE(greedy->Record(first, {Correct(1.0)}).ok());
  EXPECT_FALSE(greedy->Record(first, {Correct(1.0)}).ok());
  EXPECT_EQ(greedy->tree().size(), 2);
}

std::string SearchJson(std::uint64_t environment_seed, int iterations = 30) {
  auto greedy = NewGreedyStrategy({});
  ScriptedEnvironment environment(environment_seed);
  RunSearch(*greedy, environment, iterations);
  return DumpJson(ToJson(greedy->tree()));
}

TEST(GreedyTest, AScriptedSearchIsDeterministicAndResumable) {
  EXPECT_EQ(SearchJson(21), SearchJson(21));
  EXPECT_NE(SearchJson(21), SearchJson(22));

  auto first = NewGreedyStrategy({});
  ScriptedEnvironment environment(21);
  RunSearch(*first, environment, 10);
  auto stored = TreeFromJson(Json::parse(DumpJson(ToJson(first->tree()))));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  auto resumed = NewGreedyStrategy({}, std::move(stored).value());
  EXPECT_EQ(resumed->Next().node, first->Next().node);
  RunSearch(*resumed, environment, 20);
  EXPECT_EQ(DumpJson(ToJson(resumed->tree())), SearchJson(21));
  testing::ExpectConsistentStatistics(resumed->tree());
}

TEST(GreedyTest, AScriptedSearchOnlyClimbs) {
  // Each optimize step starts from the best node of the current attempt, so while no restart
  // happens the parent of every refinement is the fastest kernel found so far in that attempt.
  auto greedy = NewGreedyStrategy({});
  const Tree& tree = greedy->tree();
  ScriptedEnvironment environment(4);
  int attempt_start = 0;
  RunSearch(*greedy, environment, 30, 2, [&](const Selection& s) {
    EXPECT_EQ(s.mode, ModeFor(tree.node(s.node).kind));
    if (s.node == Tree::kRootId) {
      attempt_start = tree.expansions();
      return;
    }
    EXPECT_GE(tree.node(s.node).expansion, attempt_start) << "left the current attempt";
    if (s.mode != PromptMode::kOptimize) return;
    for (const Node& node : tree.nodes()) {
      if (node.correct() && node.expansion >= attempt_start) {
        EXPECT_LE(node.speedup->estimate, tree.node(s.node).speedup->estimate);
      }
    }
  });
  EXPECT_EQ(tree.expansions(), 30);
}

}  // namespace search_greedy_test
}  // namespace kernelpro::search
