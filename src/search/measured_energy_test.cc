#include "search/measured_energy.h"

#include <gtest/gtest.h>

#include <memory>

#include "search/mcts.h"
#include "search/search_testing.h"

namespace kernelpro::search {
namespace search_measured_energy_test {

using testing::CompileError;
using testing::Correct;
using testing::ExpandNode;

// ROOT → n1 1.2x, n2 compile error, n3 2.0x; n3 → n4 1.5x, n5 2.0x (the same source as n3).
struct Fixture {
  std::unique_ptr<SearchStrategy> strategy = NewMctsStrategy(MctsOptions{});
  std::map<int, NodeInfo> infos;
  Fixture() {
    EXPECT_TRUE(ExpandNode(*strategy, 0, {Correct(1.2), CompileError(), Correct(2.0)}).ok());
    EXPECT_TRUE(ExpandNode(*strategy, 3, {Correct(1.5), Correct(2.0)}).ok());
    const std::map<int, std::int64_t> candidate = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 3}};
    for (const auto& [id, c] : candidate) {
      infos[id].candidate_id = c;
      infos[id].file = "candidates/000" + std::to_string(c) + ".py";
    }
  }
};

TEST(EnergyNodesTest, TheFastestCorrectKernelsOncePerSource) {
  Fixture f;
  EXPECT_EQ(EnergyNodes(f.strategy->tree(), f.infos, 2), (std::vector<int>{3, 4}))
      << "n5 repeats n3's source; the compile error is never measured";
  EXPECT_EQ(EnergyNodes(f.strategy->tree(), f.infos, 9), (std::vector<int>{3, 4, 1}));
  EXPECT_TRUE(EnergyNodes(f.strategy->tree(), f.infos, 0).empty());
  f.infos[3].file.clear();  // no file to build: skipped
  EXPECT_EQ(EnergyNodes(f.strategy->tree(), f.infos, 1), (std::vector<int>{5}));
}

TEST(MeasuredEnergyTest, KeyAndJsonRoundTrip) {
  EXPECT_EQ(EnergyStepKey({3, 14}), "n3,n14");
  MeasuredEnergy m{{3, 14}, Json{{"arms", Json::array()}}};
  auto back = MeasuredEnergyFromJson(ToJson(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->nodes, m.nodes);
  EXPECT_EQ(back->step, m.step);
  EXPECT_FALSE(MeasuredEnergyFromJson(Json{{"nodes", {1}}}).ok());
  EXPECT_FALSE(MeasuredEnergyFromJson(Json{{"nodes", {"x"}}, {"step", Json::object()}}).ok());
}

}  // namespace search_measured_energy_test
}  // namespace kernelpro::search
