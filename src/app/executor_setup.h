// Starting what a run evaluates with, below the command line (DESIGN.md §4, app/): the cache and
// work directories (made without exceptions, taken back when nothing was made in them), the --gpus
// list, the worker client with its sandbox, and the worker's inspect step. Nothing here prints:
// failures are Status values whose messages the caller shows (cli/common.h's MakeExecutor prints
// them as "kernelpro COMMAND: ...", app::RunSearch tells its observer).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/executor.h"

namespace kernelpro::app {

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

// Splits the values of --gpus on commas ("--gpus 0,1" and "--gpus 0 --gpus 1" both give
// {"0", "1"}) and checks them: each a device ordinal (digits only, not empty), none twice.
// InvalidArgument names the bad value. Idempotent.
Status NormalizeGpus(std::vector<std::string>& gpus);

// Checks --gpus (NormalizeGpus), fills empty cache/work directories with their defaults, creates
// them and starts a worker client. On failure removes the directories it created and returns the
// reason. A command that `runs_candidates` is refused when the sandbox cannot be set up (unless
// --unsafe-no-sandbox; then the caller shows kUnsafeNoSandboxWarning).
Result<eval::Executor> StartExecutor(eval::EvalOptions& options, const std::string& python,
                                     bool runs_candidates = true);

inline constexpr const char* kUnsafeNoSandboxWarning =
    "WARNING: --unsafe-no-sandbox: candidate code runs unconfined, with your permissions, your "
    "files and the network";

// The worker's inspect step on the GPU evaluations run on (the first of --gpus), not whichever the
// process sees first: the `info` object (gpu_name, compute_capability, driver, torch_version, ...;
// on cpu no GPU fields). An error when the step could not run or answered nothing.
Result<Json> InspectDevice(const eval::Executor& executor, const std::string& device);

}  // namespace kernelpro::app
