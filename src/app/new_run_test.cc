// A run's start (app/new_run.h) with no command line: the checks before a directory is touched,
// and a new run's directory taken back when nothing was recorded in it.
#include "app/new_run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace kernelpro::app {
namespace app_new_run_test {

namespace fs = std::filesystem;

class Recorder : public RunObserver {
 public:
  void Note(const std::string& line) override { seen.push_back("note " + line); }
  void Failed(const std::string& message) override { seen.push_back("failed " + message); }
  void Started(const std::string&) override { seen.push_back("started"); }
  void IterationStarted(int, int) override {}
  void IterationEnded(const search::IterationProgress&, bool) override {}
  void Interrupted(const std::string&, const std::string&, bool) override {}
  void Finished(const RunClosing&) override { seen.push_back("finished"); }
  std::vector<std::string> seen;
};

class NewRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kp_new_run_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A CPU run of tiny_swish replayed from a cassette that is not there.
  search::RunConfig Config() {
    search::RunConfig config;
    config.problem = std::string(KERNELPRO_SOURCE_DIR) + "/tests/problems/tiny_swish.py";
    config.run_dir = (dir_ / "run").string();
    config.device = "cpu";
    config.iterations = 1;
    config.llm.provider = "replay";
    config.llm.model = (dir_ / "missing.jsonl").string();
    config.executor.device = "cpu";
    config.executor.cache_dir = (dir_ / "cache").string();
    return config;
  }

  fs::path dir_;
};

TEST_F(NewRunTest, ABadToolRuleFileStopsTheRunBeforeItsDirectoryIsMade) {
  search::RunConfig config = Config();
  config.tools.rule_files = {(dir_ / "no-rules.toml").string()};
  auto registry = CheckRunReady(config);
  ASSERT_FALSE(registry.ok());
  EXPECT_NE(registry.status().message().find("no-rules.toml"), std::string::npos)
      << registry.status().message();
  ReadyChecks resumed;
  resumed.resumed = true;
  auto again = CheckRunReady(config, resumed);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message().rfind("the run's tools: ", 0), 0u) << again.status().message();
  EXPECT_FALSE(fs::exists(config.run_dir));
}

TEST_F(NewRunTest, AMissingCassetteIsFoundBeforeTheRunStarts) {
  auto registry = CheckRunReady(Config());
  ASSERT_FALSE(registry.ok());
  EXPECT_NE(registry.status().message().find("missing.jsonl"), std::string::npos)
      << registry.status().message();
}

TEST_F(NewRunTest, ARunThatCouldNotStartTakesBackTheDirectoryItMade) {
  search::RunConfig config = Config();
  tools::ToolRegistry registry;
  Recorder recorder;
  RunOptions options;
  options.registry = &registry;
  options.observer = &recorder;
  RunOutcome outcome = StartNewRun(config, options);
  EXPECT_FALSE(outcome.finished);
  EXPECT_FALSE(outcome.recorded);
  ASSERT_FALSE(recorder.seen.empty());
  EXPECT_EQ(recorder.seen.back().rfind("failed ", 0), 0u) << recorder.seen.back();
  EXPECT_FALSE(fs::exists(config.run_dir));  // nothing left for a retry to trip over
  EXPECT_TRUE(CheckNoRecordedRun(config.run_dir).ok());
}

TEST_F(NewRunTest, AStartThatStoppedBeforeItsFirstExchangeIsReplacedWithANote) {
  search::RunConfig config = Config();
  fs::create_directories(config.run_dir);
  {
    auto store = store::RunStore::Open(config.run_dir, {});
    ASSERT_TRUE(store.ok()) << store.status().message();
  }
  EXPECT_TRUE(CheckNoRecordedRun(config.run_dir).ok());  // nothing in it was paid for
  tools::ToolRegistry registry;
  Recorder recorder;
  RunOptions options;
  options.registry = &registry;
  options.observer = &recorder;
  StartNewRun(config, options);
  ASSERT_FALSE(recorder.seen.empty());
  EXPECT_EQ(recorder.seen.front(),
            "note " + config.run_dir +
                " holds a start that stopped before its first LLM exchange; starting afresh");
  EXPECT_TRUE(fs::exists(config.run_dir));  // not made by this start: left as it was
}

}  // namespace app_new_run_test
}  // namespace kernelpro::app
