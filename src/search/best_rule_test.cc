// The best kernel by its interval (search/best_rule.h): the reference stays the answer until a
// kernel's whole interval lies above 1x; a noisy kernel displaces a clear one only from above.
// Also the rule on a recorded tree: the CPU demo of issue 33 (tests/fixtures/trees).
#include "search/best_rule.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "search/tree.h"

namespace kernelpro::search {
namespace search_best_rule_test {

BestContender Clear(double estimate, double low, double high) {
  return {RatioInterval{estimate, low, high, 0.95}, false};
}
BestContender Noisy(double estimate, double low, double high) {
  return {RatioInterval{estimate, low, high, 0.95}, true};
}

TEST(BestRuleTest, NoKernelIsTheBestUntilItsWholeIntervalLiesAboveTheReference) {
  EXPECT_EQ(PickBest({}), std::nullopt);
  EXPECT_EQ(PickBest({Clear(0.88, 0.63, 1.28), Clear(0.40, 0.33, 0.50)}), std::nullopt);
  // An estimate above 1x is not enough: its interval reaches below.
  EXPECT_EQ(PickBest({Clear(1.05, 0.97, 1.12)}), std::nullopt);
  EXPECT_EQ(PickBest({Clear(1.05, 0.97, 1.12), Clear(1.04, 1.01, 1.07)}), 1u);
  EXPECT_EQ(PickBest({Noisy(1.30, 0.90, 1.90)}), std::nullopt);
}

TEST(BestRuleTest, AClearKernelIsPreferredToANoisyOneThatDoesNotLieAboveIt) {
  // The demo of issue 33: n8 3.27x [1.59, 5.01] noisy against n5 2.12x [1.99, 2.45].
  EXPECT_EQ(PickBest({Clear(2.12, 1.99, 2.45), Noisy(3.27, 1.59, 5.01)}), 0u);
  EXPECT_EQ(PickBest({Noisy(3.27, 1.59, 5.01), Clear(2.12, 1.99, 2.45)}), 1u) << "order aside";
}

TEST(BestRuleTest, ANoisyKernelWhoseIntervalLiesAboveTheClearOnesDisplacesIt) {
  EXPECT_EQ(PickBest({Clear(2.12, 1.99, 2.45), Noisy(4.0, 2.6, 6.1)}), 1u);
  // Of two such, the surer (higher lower bound), not the higher estimate.
  EXPECT_EQ(PickBest({Clear(2.12, 1.99, 2.45), Noisy(6.0, 2.6, 9.5), Noisy(4.0, 3.0, 5.5)}), 2u);
}

TEST(BestRuleTest, NoisyKernelsAloneAreRankedByWhatTheyShow) {
  EXPECT_EQ(PickBest({Noisy(3.27, 1.59, 5.01), Noisy(2.5, 1.8, 3.2)}), 1u);
}

TEST(BestRuleTest, AmongClearKernelsTheHighestEstimateWinsAndTiesGoToTheEarlier) {
  EXPECT_EQ(PickBest({Clear(1.5, 1.4, 1.6), Clear(1.9, 1.8, 2.0), Clear(1.7, 1.6, 1.8)}), 1u);
  EXPECT_EQ(PickBest({Clear(1.9, 1.8, 2.0), Clear(1.9, 1.85, 1.95)}), 0u);
}

Tree RecordedDemoTree() {
  std::ifstream in(std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/trees/cpu_demo_noisy.json");
  std::stringstream text;
  text << in.rdbuf();
  auto tree = TreeFromJson(Json::parse(text.str()));
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  return tree.ok() ? *tree : Tree();
}

TEST(BestRuleTest, TheRecordedDemoTreesBestIsItsClearKernelNotTheNoisyEstimate) {
  const Tree tree = RecordedDemoTree();
  ASSERT_EQ(tree.size(), 9);
  EXPECT_TRUE(tree.node(8).noisy_timing) << "a noisy interval is noisy even when unflagged";
  EXPECT_FALSE(tree.node(5).noisy_timing);
  EXPECT_EQ(tree.BestNode(), 5);
  EXPECT_EQ(tree.FastestCorrectNode(), 8) << "the highest estimate, for what it is worth";
}

TEST(BestRuleTest, MidRunTheReferenceStaysTheBestWhileNoKernelLiesAboveIt) {
  // The same demo after its second iteration: n2 0.88x [0.63, 1.28] and n4 0.40x are correct.
  Json json = Json::parse(R"({"version": 1})");
  const Tree full = RecordedDemoTree();
  Json nodes = Json::array();
  for (const Node& node : full.nodes()) {
    if (node.expansion >= 2) continue;
    Json j = ToJson(full)["nodes"][node.id];
    nodes.push_back(j);
  }
  // Visits and totals of the kept nodes, recomputed from the kept subtree.
  for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
    int visits = i == 0 ? 0 : 1;
    double total = i == 0 ? 0.0 : nodes[i]["reward"].get<double>();
    for (const Json& c : nodes) {
      if (c["parent"].get<int>() == i) {
        visits += c["visits"].get<int>();
        total += c["total_reward"].get<double>();
      }
    }
    nodes[i]["visits"] = visits;
    nodes[i]["total_reward"] = total;
  }
  json["expansions"] = 2;
  json["nodes"] = nodes;
  auto mid = TreeFromJson(json);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  EXPECT_EQ(mid->BestNode(), std::nullopt);
  EXPECT_EQ(mid->FastestCorrectNode(), 2);
}

}  // namespace search_best_rule_test
}  // namespace kernelpro::search
