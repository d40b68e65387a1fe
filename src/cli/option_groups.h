// The command-line options kernelpro's subcommands share, each declared once (the model is
// llama.cpp's common/arg): a flag has one help text and at most one environment variable, the same
// in every command that takes it, and no variable is read by two flags. option_groups_test.cc
// builds every subcommand as main() does, walks all their options with FindOptionConflicts and
// fails when a flag or a variable is declared twice with different meanings.
//
// Two kinds of entries:
//   - groups, added whole by the commands that need them, each its own section of --help:
//       worker    --python, --cache-dir, --work-dir        (every command that starts a worker)
//       sandbox   --unsafe-no-sandbox, --pass-env, --sandbox-read (every command running
//       candidates) executor  trials, timing, tolerances, builds, GPUs (eval, optimize; includes
//       the two above) LLM       --llm, --llm-config, --llm-profile, --llm-record, --llm-prices
//       tools     --tool-plugin, --tool-rules, --threshold, --no-energy
//       CUTLASS   --cutlass-dir
//       budget    --iterations, --max-cost, --time-limit   (optimize, resume)
//       output    --quiet          (eval, optimize, resume, profile, analyze: long work)
//   - single options several commands take with one meaning (--problem, --json, --device, ...):
//     an OptionSpec below, added with AddOption; each command binds its own field and adds its own
//     checks and default.
// An option only one command has is declared in that command's file.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "eval/executor.h"
#include "llm/config.h"
#include "tools/registry.h"
#include "tools/tool_config.h"

namespace kernelpro::cli {

// One option as every command declares it.
struct OptionSpec {
  const char* names;            // CLI11's form: "--jobs,-j"
  const char* help;             // the same text in every command
  const char* env = nullptr;    // the one environment variable it reads; null: none
  const char* group = nullptr;  // its --help section; null: the command's own "Options"
};

// Adds `spec` to `command`, bound to `field` (a flag when `field` is a bool).
template <typename T>
CLI::Option* AddOption(CLI::App& command, const OptionSpec& spec, T& field) {
  CLI::Option* option = nullptr;
  if constexpr (std::is_same_v<T, bool>) {
    option = command.add_flag(spec.names, field, spec.help);
  } else {
    option = command.add_option(spec.names, field, spec.help);
  }
  if (spec.env != nullptr) option->envname(spec.env);
  if (spec.group != nullptr) option->group(spec.group);
  return option;
}

// ---- single options shared by several commands

inline constexpr OptionSpec kProblemOption = {
    "--problem",
    "Problem file: class Model, get_inputs(), get_init_inputs() (a PyTorch, Triton or CUDA "
    "reference)"};
inline constexpr OptionSpec kCandidateOption = {
    "--candidate",
    "Candidate file defining ModelNew (eval: repeatable; profile, advise: leave it out for the "
    "reference)"};
inline constexpr OptionSpec kJsonOption = {"--json", "Print JSON instead of text"};
inline constexpr OptionSpec kBuildOnlyOption = {
    "--build-only",
    "Only scan and build (fills the build cache; no device needed beyond the compiler)"};
inline constexpr OptionSpec kGpuOption = {
    "--gpu",
    "The GPU to target instead of the detected one, by name (H200, A100-80GB, ...): Stage 1's "
    "roofline and the prompts' GPU section; the prompts also take an architecture (sm_80, sm_90)"};
inline constexpr OptionSpec kSeedOption = {
    "--seed",
    "Seed of the command's random choices (eval: the trials' inputs; optimize: the model's "
    "sampling: each programmer request carries a seed derived from it, sent to OpenAI-compatible "
    "servers; without --seed none is sent)"};
inline constexpr OptionSpec kAnalysisOption = {
    "--analysis",
    "Stage-1 ReferenceAnalysis (`kernelpro analyze --json`, or a run's stage1.json): its "
    "roofline places each timed kernel; in advise its class also filters the tools; prompt shows "
    "it as a run's programmer reads it"};
inline constexpr OptionSpec kFromOption = {
    "--from",
    "Directory of saved profiler outputs, NAME.ncu.csv, NAME.sass.txt, ... (`profile "
    "--save` writes them)"};
inline constexpr OptionSpec kNameOption = {
    "--name",
    "NAME of the saved profiler outputs DIR/NAME.ncu.csv, ...: those --from reads (profile: those "
    "--save writes)"};
inline constexpr OptionSpec kSaveOption = {
    "--save",
    "Keep the raw profiler outputs in DIR (NAME.ncu.csv, NAME.sass.txt, ...) for a later --from"};
inline constexpr OptionSpec kMaxCharsOption = {
    "--max-chars",
    "Bound on the printed text in characters (advise: the analysis; prompt: system + user, "
    "default 60000)"};
inline constexpr OptionSpec kMaxTokensOption = {
    "--max-tokens",
    "Output token limit of a model reply (optimize: the programmer's; lower it for a small local "
    "model; a truncated reply is asked again with twice as many, up to the LLM's cap)"};
inline constexpr OptionSpec kCandidatesOption = {
    "--candidates", "Candidates the programmer is asked for per prompt, 1 to 16 (default 2)"};
inline constexpr OptionSpec kSearchOption = {
    "--search", "Search strategy: mcts or greedy (resume: only the run's own)"};
inline constexpr OptionSpec kNoNcuOption = {
    "--no-ncu", "Skip Nsight Compute (analyze: the theoretical class only)"};
inline constexpr OptionSpec kNcuTimeoutOption = {"--ncu-timeout", "Seconds for the ncu run"};
inline constexpr OptionSpec kTimelineOption = {
    "--timeline",
    "Where the timeline comes from: torch (the PyTorch profiler, the default) or nsys (Nsight "
    "Systems around the profiled call; the profiler's, with a note, when nsys makes no report)"};

// The worker group's interpreter and cache, also taken alone (doctor, cache).
inline constexpr OptionSpec kPythonOption = {"--python", "Interpreter with torch",
                                             "KERNELPRO_PYTHON", "Worker"};
inline constexpr OptionSpec kCacheDirOption = {
    "--cache-dir", "Builds and reference outputs, shared by runs (default ~/.cache/kernelpro)",
    "KERNELPRO_CACHE_DIR", "Worker"};

// The NVML library `energy`, optimize's and resume's NVML measurements load.
inline constexpr OptionSpec kNvmlLibraryOption = {
    "--nvml-library",
    "NVML library to load instead of the driver's libnvidia-ml.so.1 (tests: a fake)",
    "KERNELPRO_NVML_LIBRARY"};

// --device: cuda or cpu, its default shown in --help.
CLI::Option* AddDeviceOption(CLI::App& command, std::string& device);

// ---- groups

// --python (KERNELPRO_PYTHON): the interpreter with torch; also alone, for resume (a run
// continued on another machine).
CLI::Option* AddPythonOption(CLI::App& command, std::string& python);
// --gpus: device ordinals to evaluate on; also alone, for resume.
CLI::Option* AddGpusOption(CLI::App& command, std::vector<std::string>& gpus);

// --python (KERNELPRO_PYTHON), --cache-dir (KERNELPRO_CACHE_DIR), --work-dir. The directories are
// left empty here: MakeExecutor (common.h) fills in the defaults.
void AddWorkerOptions(CLI::App& command, eval::EvalOptions& o, std::string& python);

// --unsafe-no-sandbox, --pass-env, --sandbox-read.
void AddSandboxOptions(CLI::App& command, eval::EvalOptions& o);

// Trials, timing, tolerances, policies, parallel builds, GPUs and timeouts, with the worker and
// sandbox groups. --device, --seed and --build-only are each command's own.
void AddExecutorOptions(CLI::App& command, eval::EvalOptions& o, std::string& python);

struct LlmOptions {
  std::string spec;         // --llm PROVIDER:MODEL[@BASE_URL]  (env KERNELPRO_LLM)
  std::string config_file;  // --llm-config FILE.toml            (env KERNELPRO_LLM_CONFIG)
  std::string profile;      // --llm-profile NAME                (default "default")
  std::string record_to;    // --llm-record CASSETTE
  std::string prices_file;  // --llm-prices FILE.toml
  std::string replay_mode;  // --llm-replay-mode fingerprint|sequential (replay: models only)
};

void AddLlmOptions(CLI::App& command, LlmOptions& options);

// --llm wins over a profile; with neither, a clear error saying how to choose a model.
Result<llm::LlmConfig> ResolveLlmConfig(const LlmOptions& options);

// --tool-plugin PATH, --tool-rules PATH, --threshold TOOL.NAME=VALUE (each repeatable),
// --no-energy, --energy-proxy.

// The registry they describe: tools::BuildRegistry (tools/tool_config.h).
void AddToolOptions(CLI::App& command, tools::ToolConfig& options);

// --cutlass-dir (KERNELPRO_CUTLASS_DIR).
void AddCutlassOptions(CLI::App& command, std::string& cutlass_dir);

// "" is fine (CUTLASS off: ""); otherwise the root of the tree at `cutlass_dir`, a CUTLASS
// checkout's root or the nvidia-cutlass wheel's install folder (cutlass/locate.h), with include/
// below it; InvalidArgument when it is neither.
Result<std::string> CheckCutlassDir(const std::string& cutlass_dir);

// The CUTLASS tree that candidates including CUTLASS/CuTe headers build against, into `eval`
// (cutlass_include_dir, cutlass_version): `cutlass_dir` (--cutlass-dir, which CLI11 also fills
// from KERNELPRO_CUTLASS_DIR), else scripts/setup's copy (cutlass/locate.h). No tree anywhere is
// fine and leaves them empty: most candidates use none, and one that does fails its build with a
// message naming how to give one. A directory given but wrong is InvalidArgument, naming it.
// eval, suite and optimize all call it, so each builds against the same tree.
Status LocateCutlassForBuilds(const std::string& cutlass_dir, eval::EvalOptions& eval);

// What a search may spend; < 0: not given.
struct SearchBudget {
  int iterations = -1;
  double max_cost = -1;    // USD
  double time_limit = -1;  // seconds
};

// --quiet: no progress display on stderr (core/progress.h; MakeProgress in common.h).
void AddProgressOptions(CLI::App& command, bool& quiet);

// --iterations, --max-cost, --time-limit.
void AddBudgetOptions(CLI::App& command, SearchBudget& budget);

// ---- the check

// Every flag and environment variable of `app` and its subcommands, at any depth, that is
// declared twice with different meanings: one flag with two help texts or two variables, or one
// variable read by two flags. One line per conflict, naming the commands; empty when none.
std::vector<std::string> FindOptionConflicts(const CLI::App& app);

}  // namespace kernelpro::cli
