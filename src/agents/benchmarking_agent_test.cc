// The benchmarking agent's promise: Stage 1 runs once per problem, in one process and across a
// resumed run. Stage 1 itself needs torch and a GPU, so these tests give the agent a runner that
// returns the real H200 analysis of the swish problem (tests/fixtures/h200-advise) and counts its
// calls; RunStageOne on a real worker is exercised by `kernelpro analyze` (cli tests, GPU script).
#include "agents/benchmarking_agent.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace kernelpro::agents {
namespace agents_benchmarking_agent_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kSwish = kRoot + "/problems/swish/problem.py";
const std::string kRmsNorm = kRoot + "/problems/rms_norm/problem.py";

// A fresh, empty directory for one test.
std::string RunDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/benchmarking_agent_test_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Stage 1 as the fixture recorded it, for whichever problem is asked.
struct FakeStageOne {
  std::atomic<int> calls{0};
  Result<roofline::ReferenceAnalysis> operator()(const std::string& problem) {
    ++calls;
    auto analysis = roofline::ReadReferenceAnalysisFile(
        kRoot + "/tests/fixtures/h200-advise/swish.analysis.json");
    if (analysis.ok()) analysis->problem = problem;
    return analysis;
  }
  BenchmarkingAgent Agent() {
    return BenchmarkingAgent([this](const std::string& p) { return (*this)(p); });
  }
};

TEST(BenchmarkingAgentTest, StageOneRunsOncePerProblem) {
  FakeStageOne stage_one;
  BenchmarkingAgent agent = stage_one.Agent();
  auto first = agent.Analyze(kSwish);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->bottleneck, roofline::Bottleneck::kMemory);
  EXPECT_EQ(first->problem, kSwish);  // the runner gets the absolute path
  // The same file, spelt differently, is the same problem.
  auto again = agent.Analyze(kRoot + "/problems/rms_norm/../swish/problem.py");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(DumpJson(ToJson(*again)), DumpJson(ToJson(*first)));
  EXPECT_EQ(stage_one.calls, 1);
  EXPECT_EQ(agent.stage_one_runs(), 1);

  ASSERT_TRUE(agent.Analyze(kRmsNorm).ok());
  EXPECT_EQ(stage_one.calls, 2);
}

TEST(BenchmarkingAgentTest, AResumedRunLoadsStageOneFromTheRunDirectory) {
  const std::string dir = RunDir("resume");
  FakeStageOne first_run;
  BenchmarkingAgent agent = first_run.Agent();
  auto analysis = agent.Analyze(kSwish, dir + "/stage1.json");
  ASSERT_TRUE(analysis.ok());
  const std::string saved = dir + "/stage1.json";
  ASSERT_TRUE(std::filesystem::exists(saved));
  // It is the `kernelpro analyze --json` form, which `kernelpro advise --analysis` reads.
  auto read_back = roofline::ReadReferenceAnalysisFile(saved);
  ASSERT_TRUE(read_back.ok()) << read_back.status().ToString();
  EXPECT_EQ(read_back->bottleneck, roofline::Bottleneck::kMemory);
  EXPECT_EQ(read_back->confidence, "high");

  // A new process (a new agent) resumes from the directory without running Stage 1.
  FakeStageOne resumed_run;
  BenchmarkingAgent resumed = resumed_run.Agent();
  auto loaded = resumed.Analyze(kSwish, dir + "/stage1.json");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(resumed_run.calls, 0);
  EXPECT_EQ(DumpJson(ToJson(*loaded)), DumpJson(ToJson(*analysis)));
}

TEST(BenchmarkingAgentTest, AStageOneFileForAnotherProblemIsReplaced) {
  const std::string dir = RunDir("other_problem");
  FakeStageOne stage_one;
  ASSERT_TRUE(stage_one.Agent().Analyze(kRmsNorm, dir + "/stage1.json").ok());

  FakeStageOne second;
  auto analysis = second.Agent().Analyze(kSwish, dir + "/stage1.json");
  ASSERT_TRUE(analysis.ok());
  EXPECT_EQ(second.calls, 1);
  ASSERT_FALSE(analysis->notes.empty());
  EXPECT_NE(analysis->notes.back().find("was for " + kRmsNorm), std::string::npos)
      << analysis->notes.back();
  EXPECT_EQ(roofline::ReadReferenceAnalysisFile(dir + "/stage1.json")->problem, kSwish);
}

TEST(BenchmarkingAgentTest, AnUnreadableStageOneFileIsRunAgainWithANote) {
  const std::string dir = RunDir("corrupt");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/stage1.json") << "{\"bottleneck\": \"memo";
  FakeStageOne stage_one;
  auto analysis = stage_one.Agent().Analyze(kSwish, dir + "/stage1.json");
  ASSERT_TRUE(analysis.ok());
  EXPECT_EQ(stage_one.calls, 1);
  EXPECT_NE(analysis->notes.back().find("could not be read"), std::string::npos);
  EXPECT_TRUE(roofline::ReadReferenceAnalysisFile(dir + "/stage1.json").ok());
}

TEST(BenchmarkingAgentTest, AFailedStageOneIsAValueRememberedOnlyInMemory) {
  const std::string dir = RunDir("failure");
  int calls = 0;
  BenchmarkingAgent agent([&calls](const std::string&) -> Result<roofline::ReferenceAnalysis> {
    ++calls;
    return Status::InvalidArgument("device_error: no CUDA device");
  });
  auto first = agent.Analyze(kSwish, dir + "/stage1.json");
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().message(), "device_error: no CUDA device");
  EXPECT_FALSE(agent.Analyze(kSwish, dir + "/stage1.json").ok());
  EXPECT_EQ(calls, 1);  // not retried within the run
  EXPECT_FALSE(std::filesystem::exists(dir + "/stage1.json"));

  // A resumed run tries again.
  FakeStageOne resumed;
  EXPECT_TRUE(resumed.Agent().Analyze(kSwish, dir + "/stage1.json").ok());
  EXPECT_EQ(resumed.calls, 1);
}

TEST(BenchmarkingAgentTest, ConcurrentRequestsForOneProblemRunStageOneOnce) {
  FakeStageOne stage_one;
  BenchmarkingAgent agent = stage_one.Agent();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (agent.Analyze(kSwish).ok()) ++ok;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(stage_one.calls, 1);
}

}  // namespace agents_benchmarking_agent_test
}  // namespace kernelpro::agents
