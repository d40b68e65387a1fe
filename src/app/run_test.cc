// A whole replayed run through app::RunSearch with a recording observer (app/run_observer.h):
// what the run tells, in order, with nothing printed by app/ itself. The configuration is the one
// `kernelpro optimize` makes of its options (cli/run_request.h); nothing else of cli/ is needed.
#include "app/run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/option_groups.h"
#include "cli/run_request.h"
#include "search/run_config.h"

namespace kernelpro::app {
namespace app_run_test {

namespace fs = std::filesystem;

const std::string kRoot = KERNELPRO_SOURCE_DIR;

class Recorder : public RunObserver {
 public:
  void Note(const std::string& line) override { seen.push_back("note " + line); }
  void Failed(const std::string& message) override { seen.push_back("failed " + message); }
  void Started(const std::string& run_dir) override { seen.push_back("started " + run_dir); }
  void IterationStarted(int iteration, int iterations) override {
    seen.push_back("iteration " + std::to_string(iteration) + "/" + std::to_string(iterations));
  }
  void IterationEnded(const search::IterationProgress& p, bool) override {
    seen.push_back("ended " + p.outcome);
  }
  void Interrupted(const std::string&, const std::string& message, bool) override {
    seen.push_back("interrupted " + message);
  }
  void Finished(const RunClosing& c) override {
    closing = c;
    seen.push_back("finished " + c.stop_message);
  }

  std::vector<std::string> seen;
  RunClosing closing;
};

class AppRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kp_app_run_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `kernelpro optimize`'s configuration of a one-iteration CPU run of tiny_swish replayed from
  // `cassette`.
  search::RunConfig Config(const std::string& cassette) {
    suite::OptimizeTaskRun task;
    task.problem = kRoot + "/tests/problems/tiny_swish.py";
    task.run_dir = (dir_ / "run").string();
    task.options = {"--device",          "cpu",        "--llm",        "replay:" + cassette,
                    "--llm-replay-mode", "sequential", "--iterations", "1"};
    auto request = cli::SuiteTaskRequest(task, {"", (dir_ / "cache").string(), false});
    EXPECT_TRUE(request.ok()) << request.status().message();
    auto config = search::RunConfigFromJson(JsonGet<Json>(*request, "config", Json()));
    EXPECT_TRUE(config.ok()) << config.status().message();
    return config.ok() ? *config : search::RunConfig();
  }

  RunOutcome Run(const search::RunConfig& config, Recorder& recorder) {
    auto registry = tools::BuildRegistry(config.tools);
    EXPECT_TRUE(registry.ok()) << registry.status().message();
    RunOptions options;
    options.registry = &*registry;
    options.observer = &recorder;
    return RunSearch(config, options);
  }

  fs::path dir_;
};

TEST_F(AppRunTest, AReplayedRunTellsItsObserverEachStepInOrder) {
  Recorder recorder;
  ::testing::internal::CaptureStdout();
  RunOutcome outcome =
      Run(Config(kRoot + "/tests/fixtures/cassettes/programmer_no_candidates.jsonl"), recorder);
  // app/ prints nothing: what a user sees is the observer's to show.
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");

  EXPECT_TRUE(outcome.finished);
  EXPECT_TRUE(outcome.recorded);
  EXPECT_FALSE(outcome.found);  // the model's one reply holds no candidate
  std::vector<std::string> steps;
  for (const std::string& s : recorder.seen) {
    if (!s.starts_with("note ")) steps.push_back(s);
  }
  ASSERT_EQ(steps.size(), 4u) << ::testing::PrintToString(recorder.seen);
  EXPECT_EQ(steps[0], "started " + (dir_ / "run").string());
  EXPECT_EQ(steps[1], "iteration 1/1");
  EXPECT_TRUE(
      steps[2].starts_with("ended llm_error: malformed response: the reply holds no "
                           "candidate"))
      << steps[2];
  EXPECT_EQ(steps[3], "finished 1 iterations done");
  const RunClosing& c = recorder.closing;
  EXPECT_FALSE(c.best);
  EXPECT_EQ(c.exchanges, 1);  // the one iteration's (no memory: no lesson to write)
  EXPECT_TRUE(fs::exists(c.markdown_report)) << c.markdown_report;
  EXPECT_TRUE(fs::exists(c.html_report)) << c.html_report;
}

TEST_F(AppRunTest, ARunThatCannotStartSaysWhyAndNothingElse) {
  Recorder recorder;
  RunOutcome outcome = Run(Config((dir_ / "missing.jsonl").string()), recorder);
  EXPECT_FALSE(outcome.finished);
  EXPECT_FALSE(outcome.recorded);
  ASSERT_EQ(recorder.seen.size(), 1u) << ::testing::PrintToString(recorder.seen);
  EXPECT_TRUE(recorder.seen[0].starts_with("failed ")) << recorder.seen[0];
  EXPECT_NE(recorder.seen[0].find("missing.jsonl"), std::string::npos) << recorder.seen[0];
}

}  // namespace app_run_test
}  // namespace kernelpro::app
