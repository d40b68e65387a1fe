// A suite optimize task's run laid over the suite's (app/suite_task.h), with no command line: the
// task's problem, run directory and seed where the suite's options named none, this machine's GPU,
// interpreter, cache and sandbox over both.
#include "app/suite_task.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kernelpro::app {
namespace app_suite_task_test {

SuiteRun Suite() {
  SuiteRun suite;
  suite.config.problem = "{task problem}";
  suite.config.run_dir = "{task run directory}";
  suite.config.iterations = 3;
  suite.config.python = "python3";
  suite.config.executor.gpus = {"0", "1"};
  suite.config.gpus = 2;
  suite.config.executor.cache_dir = "/suite/cache";
  return suite;
}

suite::OptimizeTaskRun Task() {
  suite::OptimizeTaskRun task;
  task.problem = "/problems/1_relu.py";
  task.run_dir = "/suite/tasks/level1/1_relu/run";
  task.seed = 4;
  task.gpu = "1";
  return task;
}

TEST(SuiteTaskTest, TheTaskFillsWhatTheSuiteLeftOpenAndTheMachineGivesItsOwn) {
  auto config = TaskRunConfig(Suite(), Task(), {"/venv/bin/python", "/node/cache", true});
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->problem, "/problems/1_relu.py");
  EXPECT_EQ(config->run_dir, "/suite/tasks/level1/1_relu/run");
  EXPECT_EQ(config->seed, 4u);
  EXPECT_TRUE(config->seed_given);
  EXPECT_EQ(config->iterations, 3);  // the suite's own
  EXPECT_EQ(config->executor.gpus, std::vector<std::string>{"1"});
  EXPECT_EQ(config->gpus, 1);
  EXPECT_EQ(config->python, "/venv/bin/python");
  EXPECT_EQ(config->worker_python, "/venv/bin/python");
  EXPECT_EQ(config->executor.cache_dir, "/node/cache");
  EXPECT_TRUE(config->executor.unsafe_no_sandbox);
}

TEST(SuiteTaskTest, WhatTheSuitesOptionsNamedWinsOverTheTask) {
  SuiteRun suite = Suite();
  suite.config.problem = "/mine.py";
  suite.config.run_dir = "/mine";
  suite.config.seed = 9;
  suite.config.seed_given = true;
  suite.problem_given = suite.run_dir_given = suite.seed_given = true;
  suite::OptimizeTaskRun task = Task();
  task.gpu = "";
  auto config = TaskRunConfig(suite, task, {});
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->problem, "/mine.py");
  EXPECT_EQ(config->run_dir, "/mine");
  EXPECT_EQ(config->seed, 9u);
  // No lease and no machine options: the suite's GPUs, interpreter and cache stay.
  EXPECT_EQ(config->executor.gpus, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(config->python, "python3");
  EXPECT_EQ(config->executor.cache_dir, "/suite/cache");
  EXPECT_FALSE(config->executor.unsafe_no_sandbox);
}

TEST(SuiteTaskTest, ALeaseThatIsNoGpuOrdinalIsRefusedAsOptimizeRefusesIt) {
  suite::OptimizeTaskRun task = Task();
  task.gpu = "first";
  auto request = TaskRequest(Suite(), task, {});
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().message().rfind("kernelpro optimize: ", 0), 0u)
      << request.status().message();
}

TEST(SuiteTaskTest, ARunThatBeganIsResumedWithNothingOfTheSuitesOptions) {
  suite::OptimizeTaskRun task = Task();
  task.resume = true;
  auto request = TaskRequest(SuiteRun{}, task, {"/venv/bin/python", "", false});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ((*request)["start"], "resume");
  EXPECT_EQ((*request)["run_dir"], task.run_dir);
  EXPECT_EQ((*request)["gpus"], Json::array({"1"}));
  EXPECT_FALSE(request->contains("config"));
}

}  // namespace app_suite_task_test
}  // namespace kernelpro::app
