// Optimisation runs recorded where tests cannot go: on the H200 (tests/fixtures/h200-optimize,
// written by `scripts/gpu_verify OUT optimize-demo optimize-replay`: `kernelpro optimize --demo`
// and a greedy replay of the same cassette without profiling feedback), and with a real tiny model
// on the CPU (tests/fixtures/gemma-optimize). Their run stores must still open with today's code
// and say what their reports say.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "search/orchestrator.h"
#include "store/run_store.h"

namespace kernelpro::search {
namespace search_recorded_runs_test {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(KERNELPRO_SOURCE_DIR) / "tests/fixtures/h200-optimize";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

struct Expected {
  std::string run;
  std::string search;
  int programmer = 0, profiling = 0, memory = 0;
};

// Printed in test names as its name, not its bytes: ctest's names (and its cost data) stay the
// same from build to build.
void PrintTo(const Expected& e, std::ostream* os) { *os << e.run; }

class H200OptimizeFixtureTest : public ::testing::TestWithParam<Expected> {
 protected:
  void SetUp() override {
    // A copy: opening a store writes its WAL files beside it.
    dir_ = fs::temp_directory_path() /
           ("kp_h200_optimize_" + std::to_string(::getpid()) + "_" + GetParam().run);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(kFixtures / GetParam().run / "run.db", dir_ / "run.db");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(H200OptimizeFixtureTest, TheStoreSaysWhatTheReportSays) {
  const Expected& want = GetParam();
  store::RunStoreOptions options;
  options.create = false;
  auto store = store::RunStore::Open(dir_.string(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  auto stored = StoredRunConfig(**store);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->search, want.search);
  EXPECT_EQ(stored->iterations, 4);
  EXPECT_EQ(stored->candidates, 2);
  EXPECT_EQ(stored->device, "cuda");

  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok() && runs->size() == 1u);
  const std::int64_t run = runs->front().id;
  EXPECT_EQ(runs->front().status, store::RunStatus::kFinished);
  auto unfinished = (*store)->UnfinishedSteps(run);
  ASSERT_TRUE(unfinished.ok());
  EXPECT_TRUE(unfinished->empty());

  // ROOT and eight candidates: the two failed seeds of the cassette and six correct kernels.
  auto nodes = (*store)->ListNodes(run);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 9u);
  std::map<std::string, int> statuses;
  for (const store::NodeRecord& n : *nodes) {
    if (n.kind != "root") ++statuses[n.status];
    if (n.status == "correct") {
      ASSERT_TRUE(n.speedup && n.speedup_lo && n.speedup_hi);
      EXPECT_LE(*n.speedup_lo, *n.speedup);
      EXPECT_LE(*n.speedup, *n.speedup_hi);
      // Every correct kernel is a fused one-pass swish: faster than eager's two kernels.
      EXPECT_GT(*n.speedup_lo, 1.0);
      if (want.profiling > 0) {
        auto tools = (*store)->LatestToolOutput(*n.candidate_id);
        ASSERT_TRUE(tools.ok());
        EXPECT_TRUE(tools->has_value()) << "no tool output for node " << n.id;
      }
    }
  }
  EXPECT_EQ(statuses["correct"], 6);
  EXPECT_EQ(statuses["incorrect"], 1);
  EXPECT_EQ(statuses["compile_error"], 1);

  // Each agent's exchanges, as the cassette's streams served them.
  auto exchanges = (*store)->ListLlmExchanges(run);
  ASSERT_TRUE(exchanges.ok());
  std::map<std::string, int> purposes;
  for (const store::LlmExchangeRecord& e : *exchanges) ++purposes[e.purpose];
  EXPECT_EQ(purposes["programmer"], want.programmer);
  EXPECT_EQ(purposes["profiling"], want.profiling);
  EXPECT_EQ(purposes["memory"], want.memory);

  // The best node of the store is the report's, with the same speedup and interval, and best.py
  // holds its source.
  auto best = (*store)->BestCorrectNode(run);
  ASSERT_TRUE(best.ok() && best->has_value());
  const std::string report = ReadFile(kFixtures / want.run / "report.md");
  const std::string html = ReadFile(kFixtures / want.run / "report.html");
  int tree_id = -1;
  for (size_t i = 0; i < nodes->size(); ++i) {
    if ((*nodes)[i].id == (*best)->id) tree_id = static_cast<int>(i);  // ROOT is n0
  }
  const std::string headline = "Best kernel: **n" + std::to_string(tree_id) + "**";
  EXPECT_NE(report.find(headline), std::string::npos) << headline << "\n" << report;
  const std::string speedup = Fixed2(*(*best)->speedup) + "x";
  const std::string interval =
      "[" + Fixed2(*(*best)->speedup_lo) + ", " + Fixed2(*(*best)->speedup_hi) + "]";
  EXPECT_NE(report.find("**" + speedup + "** over the reference, 95% interval " + interval),
            std::string::npos)
      << report;
  EXPECT_NE(html.find(speedup), std::string::npos);
  EXPECT_NE(report.find("Device: cuda (NVIDIA H200)"), std::string::npos);
  auto candidate = (*store)->GetCandidate(*(*best)->candidate_id);
  ASSERT_TRUE(candidate.ok());
  const std::string best_py = ReadFile(kFixtures / want.run / "best.py");
  EXPECT_NE(best_py.find(candidate->source), std::string::npos);
  EXPECT_NE(
      best_py.find("# speedup:   " + speedup + " over the reference, 95% interval " + interval),
      std::string::npos)
      << best_py.substr(0, 800);
}

INSTANTIATE_TEST_SUITE_P(Runs, H200OptimizeFixtureTest,
                         ::testing::Values(Expected{"demo-cuda", "mcts", 4, 6, 4},
                                           Expected{"replay-greedy", "greedy", 4, 0, 4}),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           std::string name = info.param.run;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// Gemma 3 270M wrote an empty reply, three truncated ones and a candidate that does not compile;
// the run went through its three iterations and recorded every exchange and why each node failed.
TEST(GemmaCpuRunTest, EveryReplyAndVerdictOfTheTinyModelIsRecorded) {
  const fs::path dir = fs::temp_directory_path() / ("kp_gemma_run_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(KERNELPRO_SOURCE_DIR) / "tests/fixtures/gemma-optimize/run.db",
                dir / "run.db");
  store::RunStoreOptions options;
  options.create = false;
  auto store = store::RunStore::Open(dir.string(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok() && runs->size() == 1u);
  const std::int64_t run = runs->front().id;
  EXPECT_EQ(runs->front().status, store::RunStatus::kFinished);

  auto exchanges = (*store)->ListLlmExchanges(run);
  ASSERT_TRUE(exchanges.ok());
  EXPECT_EQ(exchanges->size(), 12u);
  int failed = 0;
  for (const store::LlmExchangeRecord& e : *exchanges) {
    EXPECT_EQ(e.model, "gemma-3-270m");
    if (e.error) {
      ++failed;
      EXPECT_NE(DumpJson(*e.error).find("holds no JSON value"), std::string::npos);
    }
  }
  EXPECT_EQ(failed, 1);

  // Why each iteration's node has no working kernel.
  std::vector<std::string> why;
  for (int iteration = 1; iteration <= 3; ++iteration) {
    auto generate = (*store)->GetStep(store::StepKey{run, iteration, "generate", ""});
    ASSERT_TRUE(generate.ok() && generate->has_value()) << iteration;
    const Json children = JsonGet<Json>((*generate)->payload, "children", Json::array());
    ASSERT_EQ(children.size(), 1u);
    why.push_back(JsonGet<std::string>(children[0], "nothing", ""));
  }
  EXPECT_NE(why[0].find("malformed response"), std::string::npos) << why[0];
  EXPECT_NE(why[1].find("response truncated after 3 attempts"), std::string::npos) << why[1];
  EXPECT_EQ(why[2], "");  // iteration 3 produced a candidate
  auto nodes = (*store)->ListNodes(run);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 4u);
  const store::NodeRecord& last = nodes->back();
  EXPECT_EQ(last.status, "compile_error");
  ASSERT_TRUE(last.candidate_id.has_value());
  auto evaluation = (*store)->LatestEvaluation(*last.candidate_id);
  ASSERT_TRUE(evaluation.ok() && evaluation->has_value());
  EXPECT_NE((*evaluation)->message.find("assignment of read-only location"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace search_recorded_runs_test
}  // namespace kernelpro::search
