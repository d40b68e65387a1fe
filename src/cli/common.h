// Pieces shared by the subcommands: default directories and the executor they all start from.
#pragma once

#include <CLI/CLI.hpp>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/executor_setup.h"
#include "core/number_check.h"
#include "core/progress.h"
#include "eval/executor.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::cli {

// Set up below the command line (app/executor_setup.h); named here as the commands use them.
using app::CreatedDirectory;
using app::DefaultCacheDir;
using app::InspectDevice;
using app::NormalizeGpus;

// `path` as a person would type it here: relative when it lies under the current directory,
// "~/..." under $HOME, else as given. For messages only: what is stored keeps the absolute path.
std::string DisplayPath(const std::string& path);

// ---- numeric options
//
// Every numeric option of every subcommand is checked by one validator built on CheckNumber
// (core/number_check.h): the value must be a finite number within the option's range. A refused
// value is a usage error (exit 2) that names the option, the value and the accepted range:
// "--atol: 'nan' is not accepted: give a finite number >= 0".

// Finite real numbers in [min, max].
CLI::Validator FiniteRange(double min, double max = std::numeric_limits<double>::max());
// Finite real numbers in (0, max]: durations, time budgets.
CLI::Validator PositiveUpTo(double max);
// Whole numbers in [min, max]: counts, token budgets, timeouts in whole seconds.
CLI::Validator WholeRange(double min, double max);

// ---- input files
//
// Every option that names a file to read checks it while parsing, so that a misspelt path is a
// usage error (exit 2) and never a verdict: "--candidate: typo.py: no such file".
CLI::Validator InputFile();

// The environment variable that sets the cache's size limit (eval::ParseCacheLimit).
inline constexpr const char* kCacheMaxSizeEnv = "KERNELPRO_CACHE_MAX_SIZE";

// Holds the cache `cache_dir` (empty: DefaultCacheDir()) to its limit (KERNELPRO_CACHE_MAX_SIZE,
// default eval::kDefaultCacheMaxBytes) by removing the least recently used entries not in use,
// precompiled headers last; one line on stderr, prefixed "kernelpro <command>: ", when it removed
// something or could not get under the limit. Called when a run ends; never fails the command.
void EnforceCacheLimit(const std::string& cache_dir, const char* command);

// Checks --gpus (NormalizeGpus), fills empty cache/work directories with their defaults, creates
// them and starts a worker client. On failure prints the reason to stderr, removes the directories
// it created and returns nullopt (the caller exits with 2). A command that `runs_candidates` is
// refused when the sandbox cannot be set up (unless --unsafe-no-sandbox).
std::optional<eval::Executor> MakeExecutor(eval::EvalOptions& options, const std::string& python,
                                           const char* command_name, bool runs_candidates = true);

// The progress display of a command on stderr (core/progress.h), each line starting with `label`
// ("eval"): a live status line when stderr is a terminal, plain lines otherwise. Null under
// --quiet (`quiet`): pass .get() where a ProgressSink* is taken, null meaning nobody watches.
std::unique_ptr<ProgressReporter> MakeProgress(const std::string& label, bool quiet);

// Stage 1, theoretical side: agents::RunStageOne (agents/benchmarking_agent.h), where the
// benchmarking agent lives. The measured side (ncu) is the caller's.
Result<roofline::ReferenceAnalysis> RunStageOne(eval::Executor& executor,
                                                const std::string& problem,
                                                const std::optional<roofline::GpuSpec>& forced,
                                                const roofline::RooflineOptions& roofline);

}  // namespace kernelpro::cli
