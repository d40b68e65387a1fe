// `kernelpro optimize`, and what `kernelpro resume` (cli/resume_command.h) and the run requests of
// suite tasks (cli/run_request.h) share with it. Every run, new or resumed, ends in
// app::RunSearch (app/run.h) through Optimize below.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/option_groups.h"
#include "core/status.h"
#include "eval/executor.h"
#include "search/run_config.h"
#include "tools/registry.h"
#include "tools/tool_config.h"

namespace kernelpro::cli {

// optimize's options as given.
struct OptimizeArgs {
  std::string problem, run_dir, search = "mcts", feedback = "tools", tool_mode = "proactive",
                                device = "cuda", gpu, python, cutlass_dir, energy = "off";
  int candidates = 2;
  int max_tokens = 16384;
  std::vector<double> temperatures;  // --temperature: one, or one per candidate
  bool no_memory = false;
  bool no_cutlass_tools = false;
  int cutlass_search_budget = 6;
  int energy_kernels = 2;          // --energy measure|aware: kernels NVML measures after the search
  std::string timeline = "torch";  // --timeline torch|nsys
  int energy_windows = 30;
  double energy_window_s = 2.0;
  std::string nvml_library;
  bool demo = false;
  bool quiet = false;  // --quiet: no progress on stderr
  std::uint64_t seed = 0;
  bool seed_given = false;  // --seed was on the command line: the programmer's requests carry seeds
  SearchBudget budget;      // iterations not given: 30, or the demo's length
  LlmOptions llm;
  tools::ToolConfig tools;
  eval::EvalOptions eval;
  // --run-request FILE ("-": stdin), hidden: the run a parent process hands this one
  // (cli/run_request.h); every other option is then left unread.
  std::string run_request;
};

// Adds optimize's options to `command`, bound to `args`. Returns --seed (given when its count()
// is not 0: OptimizeArgs::seed_given).
CLI::Option* AddOptimizeOptions(CLI::App& command, OptimizeArgs& args);

// The demo: problems/swish with candidates the project wrote, replayed from a cassette
// (problems/swish/demo/make_demo.py tells the story), so the whole loop runs without an API key.
// Everything measured is real; only the model's replies are canned.
struct Demo {
  std::string problem;
  std::string cassette;
};

// With --demo: checks that nothing the demo replaces was given (--llm, --seed, --problem), sets
// `demo` and points `args` at the demo's problem and cassette. Without --demo: nothing.
Status ApplyDemo(OptimizeArgs& args, std::optional<Demo>& demo);

// A new run's configuration from optimize's options (`demo`: ApplyDemo found one), checked as far
// as it goes without the LLM: the problem, GPU target and CUTLASS trees, the tree builds use, the
// GPU ordinals; the run directory defaults to runs/PROBLEM-TIMESTAMP. Its `llm` is left to the
// caller (ResolveLlmConfig of args.llm). InvalidArgument (or the check's own error) says what is
// wrong, as `kernelpro optimize: MESSAGE` prints it.
Result<search::RunConfig> NewRunConfig(OptimizeArgs& args, bool demo);

// optimize's options as a new run's configuration, its LLM resolved: ApplyDemo, NewRunConfig and
// ResolveLlmConfig of args.llm. The one way from options to a run, for `kernelpro optimize` and
// for the runs of `kernelpro suite optimize` (cli/run_request.h), so the two cannot drift apart.
Result<search::RunConfig> ReadRunConfig(OptimizeArgs& args, std::optional<Demo>& demo);

// Starts the new run `config` (its LLM resolved) once app::CheckRunReady passed (a cost limit
// against the model's price, the tools, the LLM and the device answer). With `demo` it says what
// is real and replays the cassette in order. The exit code.
int StartNewRun(search::RunConfig config, const Demo* demo, bool quiet);

// Runs `config` through app/ with the terminal's observer (cli/run_console.h), the progress display
// and the installed test hooks: app::RunSearch for a resumed run (the caller holds the directory's
// lock), app::StartNewRun for a new one. The exit code.
int Optimize(const search::RunConfig& config, const tools::ToolRegistry& registry, bool resume,
             bool quiet);

}  // namespace kernelpro::cli
