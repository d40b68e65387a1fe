// The run request a suite hands each optimize task's child (cli/run_request.h): the suite's
// optimize options read as `kernelpro optimize` reads its own, the task's problem, run directory
// and seed where they give none, this machine's GPU, interpreter, cache and sandbox over both.
#include "cli/run_request.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cli/optimize_command.h"
#include "search/run_config.h"

namespace kernelpro::cli {
namespace cli_run_request_test {

const std::string kProblem = std::string(KERNELPRO_SOURCE_DIR) + "/tests/problems/tiny_swish.py";

suite::OptimizeTaskRun NewTask(std::vector<std::string> options) {
  suite::OptimizeTaskRun task;
  task.problem = kProblem;
  task.run_dir = "/tmp/kp-suite/tasks/level1/1_tiny_swish/run";
  task.options = std::move(options);
  return task;
}

const std::vector<std::string> kReplay = {
    "--device", "cpu", "--llm", "replay:/nowhere/x.jsonl", "--llm-replay-mode", "sequential"};

std::vector<std::string> With(std::vector<std::string> options,
                              const std::vector<std::string>& more) {
  options.insert(options.end(), more.begin(), more.end());
  return options;
}

search::RunConfig ConfigOf(const Json& request) {
  auto config = search::RunConfigFromJson(JsonGet<Json>(request, "config", Json()));
  EXPECT_TRUE(config.ok()) << config.status().message() << "\n" << request.dump(2);
  return config.ok() ? *config : search::RunConfig();
}

TEST(SuiteTaskRequestTest, ARunThatBeganIsResumedWithThisMachinesOptions) {
  suite::OptimizeTaskRun task = NewTask({"--iterations", "9"});
  task.resume = true;
  task.gpu = "1";
  auto request = SuiteTaskRequest(task, {"/opt/py/bin/python3", "/tmp/cache", true});
  ASSERT_TRUE(request.ok()) << request.status().message();
  // The run keeps its own options: only the machine's are given (not the cache: a run keeps its
  // own).
  EXPECT_EQ(*request, (Json{{"start", "resume"},
                            {"run_dir", task.run_dir},
                            {"gpus", Json::array({"1"})},
                            {"python", "/opt/py/bin/python3"},
                            {"unsafe_no_sandbox", true}}));
  task.gpu = "";
  request = SuiteTaskRequest(task, {});
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ((*request)["gpus"], Json::array());
  EXPECT_EQ((*request)["python"], "");
}

TEST(SuiteTaskRequestTest, ANewRunReadsTheSuitesOptionsAsOptimizeDoes) {
  suite::OptimizeTaskRun task = NewTask(
      With(kReplay, {"--iterations", "2", "--candidates", "3", "--search", "greedy", "--feedback",
                     "raw", "--no-memory", "--trials", "4", "--energy", "measure"}));
  task.seed = 7;
  task.gpu = "2";
  auto request = SuiteTaskRequest(task, {"", "/tmp/kp-cache", false});
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ((*request)["start"], "optimize");
  EXPECT_EQ((*request)["unsafe_no_sandbox"], false);
  const search::RunConfig config = ConfigOf(*request);
  EXPECT_EQ(config.problem, kProblem);
  EXPECT_EQ(config.run_dir, task.run_dir);
  EXPECT_EQ(config.device, "cpu");
  EXPECT_EQ(config.iterations, 2);
  EXPECT_EQ(config.candidates, 3);
  EXPECT_EQ(config.search, "greedy");
  EXPECT_EQ(config.feedback, agents::FeedbackMode::kRaw);
  EXPECT_FALSE(config.memory);
  EXPECT_EQ(config.energy, search::EnergyMode::kMeasure);
  // The task's seed reaches the model (the suite sends seeds).
  EXPECT_EQ(config.seed, 7u);
  EXPECT_TRUE(config.seed_given);
  // The LLM is resolved here, once, as optimize resolves it.
  EXPECT_EQ(config.llm.provider, "replay");
  EXPECT_EQ(config.llm.model, "/nowhere/x.jsonl");
  EXPECT_EQ(config.llm.replay_mode, "sequential");
  // The executor: the suite's trials, this machine's GPU and cache; a search's precompiled
  // headers.
  EXPECT_EQ(config.executor.correctness_trials, 4);
  EXPECT_EQ(config.executor.gpus, std::vector<std::string>{"2"});
  EXPECT_EQ(config.gpus, 1);
  EXPECT_EQ(config.executor.cache_dir, "/tmp/kp-cache");
  EXPECT_TRUE(config.executor.precompiled_headers);
}

TEST(SuiteTaskRequestTest, TheSuitesOptionsWinOverTheTaskAndTheMachineOverBoth) {
  suite::OptimizeTaskRun task = NewTask(With(kReplay, {"--seed", "5", "--run-dir", "/tmp/elsewhere",
                                                       "--python", "py-a", "--unsafe-no-sandbox"}));
  task.seed = 7;
  auto request = SuiteTaskRequest(task, {"py-b", "", false});
  ASSERT_TRUE(request.ok()) << request.status().message();
  const search::RunConfig config = ConfigOf(*request);
  EXPECT_EQ(config.seed, 5u);
  EXPECT_TRUE(config.seed_given);
  EXPECT_EQ(config.run_dir, "/tmp/elsewhere");
  EXPECT_EQ(config.worker_python, "py-b");
  EXPECT_EQ((*request)["unsafe_no_sandbox"], true);
}

// A suite and `kernelpro optimize` cannot drift apart: a task's run is the run optimize makes of
// the suite's options with the task's problem, run directory and seed on its command line.
TEST(SuiteTaskRequestTest, ATasksRunIsTheRunOptimizeMakesOfTheSameOptions) {
  const std::vector<std::string> options =
      With(kReplay, {"--iterations", "3", "--candidates", "2", "--feedback", "none", "--trials",
                     "5", "--max-tokens", "4096", "--temperature", "0.2,0.7"});
  suite::OptimizeTaskRun task = NewTask(options);
  task.seed = 11;
  auto request = SuiteTaskRequest(task, {});
  ASSERT_TRUE(request.ok()) << request.status().message();

  std::vector<std::string> command_line = options;
  command_line.insert(command_line.end(),
                      {"--problem", kProblem, "--run-dir", task.run_dir, "--seed", "11"});
  auto parsed = ParseOptimizeOptions(command_line);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  std::optional<Demo> demo;
  auto optimize = ReadRunConfig(parsed->args, demo);
  ASSERT_TRUE(optimize.ok()) << optimize.status().message();
  EXPECT_EQ(JsonGet<Json>(*request, "config", Json()).dump(2), search::ToJson(*optimize).dump(2));
}

TEST(SuiteTaskRequestTest, WithoutSeedsTheModelGetsNone) {
  auto request = SuiteTaskRequest(NewTask(kReplay), {});
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_FALSE(ConfigOf(*request).seed_given);
}

TEST(SuiteTaskRequestTest, OptionsThatMakeNoRunAreTheLineOptimizePrints) {
  auto unknown = SuiteTaskRequest(NewTask(With(kReplay, {"--bogus"})), {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message().rfind("kernelpro optimize: ", 0), 0u)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("--bogus"), std::string::npos)
      << unknown.status().message();
  auto reactive = SuiteTaskRequest(
      NewTask(With(kReplay, {"--tool-mode", "reactive", "--feedback", "raw"})), {});
  ASSERT_FALSE(reactive.ok());
  EXPECT_EQ(reactive.status().message(),
            "kernelpro optimize: --tool-mode reactive needs --feedback tools");
}

}  // namespace cli_run_request_test
}  // namespace kernelpro::cli
