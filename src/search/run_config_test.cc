// The run's configuration: everything a resumed run needs round-trips, typed; runs recorded before
// RunConfig existed still open; bad values are refused.
#include "search/run_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kernelpro::search {
namespace search_run_config_test {

RunConfig Full() {
  RunConfig o;
  o.problem = "/p/swish.py";
  o.run_dir = "/runs/swish";
  o.iterations = 7;
  o.search = "mcts";
  o.feedback = agents::FeedbackMode::kRaw;
  o.max_cost_usd = 1.5;
  o.seed = 42;
  o.seed_given = true;
  o.gpu.arch = "sm_80";
  o.gpu_name = "A100";
  o.gpus = 2;
  o.temperatures = {0.2, 0.45};
  o.tools.rule_files = {"/rules/mine.toml"};
  o.tools.thresholds = {"dram_bandwidth.min_pct=70"};
  o.tools.no_energy = true;
  o.energy = EnergyMode::kAware;
  o.energy_kernels = 3;
  o.energy_windows = 12;
  o.energy_window_s = 0.5;
  o.llm.provider = "openai";
  o.llm.model = "gpt-4o";
  o.llm.api_key_env = "MY_KEY";
  o.executor.timing_trials = 50;
  o.executor.pass_env = {"HF_HOME"};
  o.worker_python = "/venv/bin/python";
  return o;
}

TEST(RunConfigTest, EverythingAResumedRunNeedsRoundTrips) {
  const RunConfig o = Full();
  auto back = RunConfigFromJson(ToJson(o));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToJson(*back), ToJson(o));
  EXPECT_EQ(back->llm.model, "gpt-4o");
  EXPECT_EQ(back->llm.api_key_env, "MY_KEY");
  EXPECT_EQ(back->executor.timing_trials, 50);
  EXPECT_EQ(back->tools.thresholds, o.tools.thresholds);
  EXPECT_EQ(back->temperatures, o.temperatures);
  EXPECT_EQ(back->worker_python, "/venv/bin/python");
  EXPECT_EQ(back->gpu_name, "A100");
  EXPECT_EQ(back->seed, 42u);
  EXPECT_TRUE(back->seed_given);
  EXPECT_EQ(back->energy, EnergyMode::kAware) << "a resumed aware run stays aware";
  EXPECT_EQ(back->energy_kernels, 3);
  EXPECT_EQ(back->energy_windows, 12);
  EXPECT_EQ(back->energy_window_s, 0.5);
}

TEST(RunConfigTest, NeverStoresTheDecisionToRunUnconfined) {
  RunConfig o = Full();
  o.executor.unsafe_no_sandbox = true;
  auto back = RunConfigFromJson(ToJson(o));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->executor.unsafe_no_sandbox);
}

TEST(RunConfigTest, ARunRecordedBeforeRunConfigStillOpens) {
  // The form `kernelpro optimize` stored before: the LLM, executor, --python and --gpu under
  // "frontend".
  const Json old = Json::parse(R"({
    "problem": "/p/swish.py", "iterations": 4, "candidates": 2, "search": "mcts",
    "feedback": "tools", "memory": true, "seed": 0, "run_dir": "/runs/old",
    "max_cost_usd": null, "time_limit_s": null, "device": "cuda", "gpus": 1,
    "gpu": {"arch": "sm_90", "name": "H200"}, "cutlass_dir": "", "python": "python3",
    "programmer_max_tokens": 16384, "memory_chars": 6000,
    "frontend": {"llm": {"provider": "replay", "model": "/c.jsonl", "replay_mode": "sequential"},
                 "eval": {"device": "cuda", "timing_trials": 80, "jobs": 4},
                 "python": "/usr/bin/python3", "gpu": "H200"}})");
  auto o = RunConfigFromJson(old);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->llm.provider, "replay");
  EXPECT_EQ(o->llm.replay_mode, "sequential");
  EXPECT_EQ(o->executor.timing_trials, 80);
  EXPECT_EQ(o->executor.jobs, 4);
  EXPECT_EQ(o->worker_python, "/usr/bin/python3");
  EXPECT_EQ(o->gpu_name, "H200");
  EXPECT_TRUE(o->temperatures.empty());
  EXPECT_TRUE(o->tools.rule_files.empty());
  // Its "seed": 0 was only recorded: resumed, it still sends no seed (its cassette has none).
  EXPECT_FALSE(o->seed_given);
  EXPECT_FALSE(ProgrammerSeed(*o, 1).has_value());
  // Recorded before --energy: speed only.
  EXPECT_EQ(o->energy, EnergyMode::kOff);
}

TEST(RunConfigTest, BadValuesAreRefused) {
  Json bad = ToJson(Full());
  bad["search"] = "beam";
  EXPECT_FALSE(RunConfigFromJson(bad).ok());
  bad = ToJson(Full());
  bad["gpus"] = 0;
  EXPECT_FALSE(RunConfigFromJson(bad).ok());
  bad = ToJson(Full());
  bad["feedback"] = "psychic";
  EXPECT_FALSE(RunConfigFromJson(bad).ok());
  bad = ToJson(Full());
  bad["energy"] = "frugal";
  EXPECT_FALSE(RunConfigFromJson(bad).ok());
  bad = ToJson(Full());
  bad["energy_windows"] = 0;
  EXPECT_FALSE(RunConfigFromJson(bad).ok());
  bad = ToJson(Full());
  bad["energy_kernels"] = -1;
  EXPECT_FALSE(RunConfigFromJson(bad).ok());
  EXPECT_FALSE(RunConfigFromJson(Json::array()).ok());
  // A run stored before --gpus existed profiles one child at a time.
  Json old = ToJson(Full());
  old.erase("gpus");
  EXPECT_EQ(RunConfigFromJson(old)->gpus, 1);
}

// `kernelpro resume` on another machine: the run keeps its options, but the interpreter and the
// GPUs are the machine's.
TEST(RunConfigTest, AReopenedRunTakesTheMachinesPythonAndGpus) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kp_run_config_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  RunConfig first = Full();
  first.problem = (dir / "problem.py").string();
  std::ofstream(first.problem) << "class Model: pass\n";
  first.run_dir = (dir / "run").string();
  first.python = "/old/python";
  first.executor.gpus = {"0", "1"};
  {
    auto store = store::RunStore::Open(first.run_dir);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE(OpenRun(**store, first).ok());
  }
  RunConfig here = first;
  here.python = "/new/python";
  here.worker_python = "/new/python";
  here.gpus = 1;
  here.executor.gpus = {"3"};
  here.search = "greedy";  // not the machine's: the run keeps its own
  auto store = store::RunStore::Open(first.run_dir);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto opened = OpenRun(**store, here);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_TRUE(opened->resumed);
  EXPECT_EQ(opened->config.python, "/new/python");
  EXPECT_EQ(opened->config.worker_python, "/new/python");
  EXPECT_EQ(opened->config.gpus, 1);
  EXPECT_EQ(opened->config.executor.gpus, std::vector<std::string>{"3"});
  EXPECT_EQ(opened->config.search, "mcts");
  EXPECT_EQ(opened->config.executor.timing_trials, 50);
  store->reset();
  fs::remove_all(dir);
}

}  // namespace search_run_config_test
}  // namespace kernelpro::search
