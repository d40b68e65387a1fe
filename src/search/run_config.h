// The configuration of one optimisation run: what `kernelpro optimize` was asked for, saved with
// the run in the store and read back by `kernelpro resume`, so a resumed run makes the same
// choices. Never holds secrets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "agents/search_memory.h"
#include "agents/types.h"
#include "core/json_io.h"
#include "core/status.h"
#include "store/run_store.h"

namespace kernelpro::search {

struct OptimizeOptions {
  std::string problem;          // the problem file (absolute once the run is created)
  int iterations = 30;          // T: expansions of the tree
  int candidates = 2;           // N: candidates asked for per expansion
  std::string search = "mcts";  // mcts | greedy
  agents::FeedbackMode feedback = agents::FeedbackMode::kTools;  // tools | reactive | raw | none
  bool memory = true;      // search memory and its extractor (--no-memory: off)
  std::uint64_t seed = 0;  // recorded with the run (the strategies make no random choice)
  std::string run_dir;     // run.db, stage1.json, candidates/, memory.jsonl, best.py, report.*
  std::optional<double> max_cost_usd;  // stop before an iteration once the exchanges cost this
  std::optional<double> time_limit_s;  // stop before an iteration once this process ran this long
  std::string device = "cuda";         // cuda | cpu (C++ CPU extensions, no profiling)
  agents::GpuTarget gpu;               // the GPU the prompts are written for
  std::string cutlass_dir;             // "" = CUTLASS off in the prompts
  std::string python = "python3";      // the programmer's syntax check
  int programmer_max_tokens = 16384;
  std::size_t memory_chars = agents::kDefaultMemoryChars;  // the prompt's memory block
  // GPUs the evaluator runs on (--gpus): how many children's profiles may run at once.
  int gpus = 1;
  // Whatever the front end needs to resume the run (the LLM config, executor options), stored
  // with the run and handed back untouched. Never holds secrets.
  Json frontend = Json::object();
};

Json ToJson(const OptimizeOptions& options);
// Reads what ToJson wrote; missing fields keep their defaults, bad values are InvalidArgument.
Result<OptimizeOptions> OptimizeOptionsFromJson(const Json& json);

// The options a stored run was created with (`kernelpro resume` starts from them). NotFound when
// the store holds no run.
Result<OptimizeOptions> StoredRunOptions(store::RunStore& store);

// A run as the store holds it, once opened.
struct OpenedRun {
  OptimizeOptions options;  // the run's own; budget and run_dir as this process was given them
  std::int64_t run_id = 0;
  std::int64_t root_node_id = 0;  // the ROOT's row
  bool resumed = false;           // the store held the run already
};

// Creates the run in a store that holds none (its options and its ROOT node appear together, or
// not at all), or opens the one it holds. A stored run keeps its own options except the budget
// (iterations, max_cost_usd, time_limit_s) and run_dir of `requested`, so a resumed run can be
// given more. Refused when the problem file is gone or changed since the run began.
Result<OpenedRun> OpenRun(store::RunStore& store, OptimizeOptions requested);

}  // namespace kernelpro::search
