// The configuration of one optimisation run: what `kernelpro optimize` was asked for, typed, saved
// once with the run in the store and read back by `kernelpro resume`, so a resumed run makes the
// same choices (problem, device and GPU, search, feedback and tools, programmer, LLM profile,
// executor options). Never holds secrets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/feedback_mode.h"
#include "agents/gpu_target.h"
#include "agents/search_memory.h"
#include "core/json_io.h"
#include "core/status.h"
#include "eval/executor.h"
#include "llm/config.h"
#include "store/run_store.h"
#include "tools/tool_config.h"

namespace kernelpro::search {

// --energy (paper §5.5, Appendix I.2; docs/energy.md): what a run does with energy.
//   off      speed only: no proxy, no energy tools (the default; the paper's standard KernelPro)
//   measure  the energy proxy of every correct candidate is recorded and reported; the search,
//            its prompts and its tools are those of `off`, so its tree is byte-identical
//   aware    as measure, and the reward adds ε·ln(energy_reduction) (search/reward.h), the
//            programmer's prompt gains an "Energy preferences" section, the energy-only tools run
enum class EnergyMode { kOff, kMeasure, kAware };
const char* EnergyModeName(EnergyMode mode);  // "off", "measure", "aware"
std::optional<EnergyMode> ParseEnergyMode(const std::string& name);

struct RunConfig {
  // ---- the problem and where the run lives
  std::string problem;  // the problem file (absolute once the run is created)
  std::string run_dir;  // its layout: store/run_layout.h

  // ---- the device
  std::string device = "cuda";  // cuda | cpu (C++ CPU extensions, no profiling)
  int gpus = 1;                 // GPUs the evaluator runs on: how many profiles may run at once
  agents::GpuTarget gpu;        // the GPU the prompts are written for
  std::string gpu_name;         // --gpu as given: Stage 1 classifies for it; "" = the detected one

  // ---- the search
  int iterations = 30;          // T: expansions of the tree
  int candidates = 2;           // N: candidates asked for per expansion
  std::string search = "mcts";  // mcts | greedy
  bool memory = true;           // search memory and its extractor (--no-memory: off)
  std::size_t memory_chars = agents::kDefaultMemoryChars;  // the prompt's memory block
  // --seed. The strategies make no random choice; the randomness of a run is the model's
  // sampling, so the seed acts there: when seed_given, each programmer request carries a seed
  // derived from it (ProgrammerSeed below; docs/seeds.md). Without --seed no request carries one,
  // as before seeds were sent (runs and cassettes recorded then replay unchanged).
  std::uint64_t seed = 0;
  bool seed_given = false;             // --seed was given (runs recorded before the field: false)
  std::optional<double> max_cost_usd;  // stop before an iteration once the exchanges cost this
  std::optional<double> time_limit_s;  // stop before an iteration once this process ran this long
  agents::FeedbackMode feedback = agents::FeedbackMode::kTools;  // tools | reactive | raw | none
  tools::ToolConfig tools;  // the user's tools (paths absolute, so resume finds them from anywhere)
  // --energy. Runs recorded before the option: off (their energy tools ran; a resumed one's no
  // longer do).
  EnergyMode energy = EnergyMode::kOff;
  // After the search, with energy measure|aware: NVML's energy per call (eval/energy.h) of the
  // reference and the `energy_kernels` fastest correct kernels (0: none), in `energy_windows`
  // windows of `energy_window_s` seconds each (search/measured_energy.h).
  int energy_kernels = 2;
  // --timeline: the profiled candidates' timeline from "torch" (the PyTorch profiler) or "nsys"
  // (eval/profile_runner.h).
  std::string timeline = "torch";
  int energy_windows = 30;
  double energy_window_s = 2.0;
  // The NVML library to load ("" = the driver's; --nvml-library, KERNELPRO_NVML_LIBRARY). The
  // machine's own: not stored with the run.
  std::string nvml_library;

  // ---- the programmer
  int programmer_max_tokens = 16384;
  // Sampling temperature of the programmer's requests; empty: the server's default. One value:
  // every request. Several: one request per candidate, candidate i at temperatures[i % size]
  // (the paper seeds its runs at several temperatures).
  std::vector<double> temperatures;
  std::string cutlass_dir;  // "" = CUTLASS off in the prompts
  // With cutlass_dir: offer the programmer the CUTLASS code-search tools and check_smem_layout
  // (--no-cutlass-tools: off), and how many searches an iteration may make.
  bool cutlass_tools = true;
  int cutlass_search_budget = 6;
  std::string python = "python3";  // the programmer's syntax check

  // ---- the LLM and the executor, as the run was started with them (no secrets: keys are named
  // by their environment variables only)
  llm::LlmConfig llm;
  eval::EvalOptions executor;
  std::string worker_python;  // --python: the interpreter with torch; "" = the default
};

Json ToJson(const RunConfig& config);
// Reads what ToJson wrote, and the form runs recorded before RunConfig kept (the LLM, executor
// and --gpu under "frontend"); missing fields keep their defaults, bad values are InvalidArgument.
Result<RunConfig> RunConfigFromJson(const Json& json);

// The seed of the programmer's first request in `iteration` (1-based) of a run with
// `config.seed_given`; nullopt without it. Request i of the iteration (one per candidate at several
// temperatures, else only 0) carries this + i:
//   (seed × 1000003 + iteration × 1000) mod 2^31  + i
// A pure function of the run's options and the iteration, so a resumed run asks what it asked the
// first time. Seeds S and S+1 never share a request seed within 1000 iterations (1000 × 1000 <
// 1000003), and the value fits every server's seed type (llama.cpp's server takes 32 bits and
// reads 0xFFFFFFFF as "random").
std::optional<std::uint64_t> ProgrammerSeed(const RunConfig& config, int iteration);

// The configuration a stored run was created with (`kernelpro resume` starts from it). NotFound
// when the store holds no run.
Result<RunConfig> StoredRunConfig(store::RunStore& store);

// A run as the store holds it, once opened.
struct OpenedRun {
  RunConfig config;  // the run's own; budget and run_dir as this process was given them
  std::int64_t run_id = 0;
  std::int64_t root_node_id = 0;  // the ROOT's row
  bool resumed = false;           // the store held the run already
};

// Creates the run in a store that holds none (its options and its ROOT node appear together, or
// not at all), or opens the one it holds. A stored run keeps its own options except the budget
// (iterations, max_cost_usd, time_limit_s) and run_dir of `requested`, so a resumed run can be
// given more, and the machine's own (gpus, executor.gpus, python, worker_python), so it can be
// continued on another machine. Refused when the problem file is gone or changed since the run
// began.
Result<OpenedRun> OpenRun(store::RunStore& store, RunConfig requested);

}  // namespace kernelpro::search
