// Pieces shared by the subcommands: default directories and the executor they all start from.
#pragma once

#include <CLI/CLI.hpp>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/progress.h"
#include "eval/executor.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::cli {

// `path` as a person would type it here: relative when it lies under the current directory,
// "~/..." under $HOME, else as given. For messages only: what is stored keeps the absolute path.
std::string DisplayPath(const std::string& path);

// ---- numeric options
//
// Every numeric option of every subcommand is checked by one validator: the value must be a finite
// number (CLI::Range lets "nan" through, since every comparison with NaN is false, and "inf" makes
// a timeout never fire) within the option's range. A refused value is a usage error (exit 2) that
// names the option, the value and the accepted range: "--atol: 'nan' is not accepted: give a finite
// number >= 0".
struct NumberRange {
  double min = std::numeric_limits<double>::lowest();
  double max = std::numeric_limits<double>::max();
  bool min_exclusive = false;  // (min, max]: a duration or a budget must be more than 0
  bool whole = false;          // counts: whole numbers only
};

// "" when `text` is a number within `range`; otherwise why not, naming the value and the range.
std::string CheckNumber(const std::string& text, const NumberRange& range);

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

// ---- directories the user names
//
// A directory a command creates (--work-dir, --cache-dir, --save, a run directory), made without
// exceptions, that can be taken back: a command that fails before it produced anything leaves the
// file system as it found it. Two ways back, for two kinds of place:
//   - Undo(), for a place that belongs to this one command (a run directory, which must not hold a
//     run yet): removes everything this invocation added, the topmost directory it created with
//     all below it, or, when the directory already existed, the entries that were not there.
//   - RemoveIfEmpty(), for a place other processes may share (a cache, a work directory, a --save
//     directory several profiles write into): removes the directories it created, and only while
//     they are empty, so nothing another process wrote there is ever lost.
// Not thread-safe.
class CreatedDirectory {
 public:
  // Creates `path` and its missing parents. IoError "cannot create LABEL PATH: REASON" (or "... is
  // not a directory") when it cannot; `label` names the option ("--work-dir").
  static Result<CreatedDirectory> Create(const std::string& path, const std::string& label);

  CreatedDirectory(CreatedDirectory&&) = default;
  CreatedDirectory& operator=(CreatedDirectory&&) = default;

  // Errors are ignored in both: they run on a failure path, and what cannot be removed is no worse
  // than before.
  void Undo();
  void RemoveIfEmpty();

  // `entry` (a name in the directory) was there before but this command replaced it: Undo
  // removes it too.
  void Disown(const std::string& entry) { before_.erase(entry); }

 private:
  CreatedDirectory() = default;
  std::string path_;              // absolute, normalised
  std::string created_root_;      // the topmost directory Create made; "" when `path_` existed
  std::set<std::string> before_;  // the entries of `path_` before, when it existed
};

// $XDG_CACHE_HOME/kernelpro, else ~/.cache/kernelpro: builds and references shared by runs.
std::string DefaultCacheDir();

// The environment variable that sets the cache's size limit (eval::ParseCacheLimit).
inline constexpr const char* kCacheMaxSizeEnv = "KERNELPRO_CACHE_MAX_SIZE";

// Holds the cache `cache_dir` (empty: DefaultCacheDir()) to its limit (KERNELPRO_CACHE_MAX_SIZE,
// default eval::kDefaultCacheMaxBytes) by removing the least recently used entries not in use,
// precompiled headers last; one line on stderr, prefixed "kernelpro <command>: ", when it removed
// something or could not get under the limit. Called when a run ends; never fails the command.
void EnforceCacheLimit(const std::string& cache_dir, const char* command);

// Splits the values of --gpus on commas ("--gpus 0,1" and "--gpus 0 --gpus 1" both give
// {"0", "1"}) and checks them: each a device ordinal (digits only, not empty), none twice.
// InvalidArgument names the bad value. Idempotent.
Status NormalizeGpus(std::vector<std::string>& gpus);

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

// The worker's inspect step on the GPU evaluations run on (the first of --gpus), not whichever the
// process sees first: the `info` object (gpu_name, compute_capability, driver, torch_version, ...;
// on cpu no GPU fields). An error when the step could not run or answered nothing.
Result<Json> InspectDevice(const eval::Executor& executor, const std::string& device);

// Stage 1, theoretical side: agents::RunStageOne (agents/benchmarking_agent.h), where the
// benchmarking agent lives. The measured side (ncu) is the caller's.
Result<roofline::ReferenceAnalysis> RunStageOne(eval::Executor& executor,
                                                const std::string& problem,
                                                const std::optional<roofline::GpuSpec>& forced,
                                                const roofline::RooflineOptions& roofline);

}  // namespace kernelpro::cli
