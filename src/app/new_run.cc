#include "app/new_run.h"

#include <filesystem>

#include "app/executor_setup.h"
#include "app/preflight.h"
#include "store/run_layout.h"
#include "store/run_lock.h"
#include "store/run_store.h"
#include "tools/tool_config.h"

namespace kernelpro::app {
namespace {

namespace fs = std::filesystem;

// What a run directory's store holds, for a new run that would go there.
enum class StoredRun {
  kNone,      // no run.db
  kNothing,   // a run.db with no run, or a run that stopped before its first LLM exchange
  kRecorded,  // a run worth resuming
};

StoredRun StoredRunIn(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::exists(store::RunLayout(run_dir).store(), ec)) return StoredRun::kNone;
  store::RunStoreOptions options;
  options.create = false;
  auto store = store::RunStore::Open(run_dir, options);
  if (!store.ok()) return StoredRun::kRecorded;  // unreadable: keep it, the user decides
  return HoldsExchanges(**store) ? StoredRun::kRecorded : StoredRun::kNothing;
}

// Removes a run store that holds nothing worth resuming (StoredRun::kNothing), with its SQLite
// companions.
void RemoveRunStore(const std::string& run_dir) {
  const std::string db = store::RunLayout(run_dir).store();
  std::error_code ec;
  for (const std::string& file : {db, db + "-wal", db + "-shm", db + "-journal"}) {
    fs::remove(file, ec);
  }
}

std::string AlreadyHoldsARun(const std::string& run_dir) {
  return run_dir + " already holds a run; continue it with: kernelpro resume " + run_dir +
         " (or give another --run-dir)";
}

}  // namespace

Result<tools::ToolRegistry> CheckRunReady(const search::RunConfig& config,
                                          const ReadyChecks& checks) {
  if (checks.cost_limit && config.max_cost_usd) {
    if (Status s = CheckCostLimitReachable(config.llm); !s.ok()) return s;
  }
  // The user's tools join the search; a bad plugin, rule file or threshold stops it here.
  auto registry = tools::BuildRegistry(config.tools);
  if (!registry.ok()) {
    if (!checks.resumed) return registry.status();
    return Status::InvalidArgument("the run's tools: " + registry.status().message());
  }
  // Before the run directory is touched: a run that cannot start leaves nothing to clean up (a
  // resumed one: a key unset since, a server down, a GPU gone).
  if (Status s = CheckLlmReady(config.llm); !s.ok()) return s;
  if (Status s = CheckDeviceReady(config.device, config.worker_python, config.executor.gpus);
      !s.ok()) {
    if (!checks.resumed || config.device != "cuda") return s;
    return Status::Unavailable(s.message() + " (this run's candidates are CUDA kernels)");
  }
  return registry;
}

Status CheckNoRecordedRun(const std::string& run_dir) {
  if (StoredRunIn(run_dir) == StoredRun::kRecorded) {
    return Status::InvalidArgument(AlreadyHoldsARun(run_dir));
  }
  return Status::Ok();
}

RunOutcome StartNewRun(const search::RunConfig& config, const RunOptions& options) {
  RunObserver& observer = *options.observer;
  // A run that fails before it recorded anything takes back what it created (the run directory,
  // or what it added to an existing one), so that no half-made run.db makes the next start refuse
  // the directory as "already holding a run".
  auto made = CreatedDirectory::Create(config.run_dir, "the run directory");
  if (!made.ok()) {
    observer.Failed(made.status().message());
    return {};
  }
  // Held while the run runs: no second run works on this directory. Refused, nothing is undone:
  // the directory is the holder's.
  auto lock = store::RunDirectoryLock::Acquire(config.run_dir, "optimize");
  if (!lock.ok()) {
    observer.Failed(lock.status().message());
    return {};
  }
  switch (StoredRunIn(config.run_dir)) {
    case StoredRun::kRecorded:
      observer.Failed(AlreadyHoldsARun(config.run_dir));
      return {};
    case StoredRun::kNothing:
      // A start that stopped before its first exchange (killed, or from an older version that
      // left its store behind): nothing in it was paid for, so this run takes its place.
      observer.Note(config.run_dir +
                    " holds a start that stopped before its first LLM exchange; starting afresh");
      RemoveRunStore(config.run_dir);
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        made->Disown(std::string(store::kRunStoreFileName) + suffix);
      }
      break;
    case StoredRun::kNone:
      break;
  }
  RunOptions run = options;
  run.resume = false;
  RunOutcome outcome = RunSearch(config, run);
  if (!outcome.recorded) made->Undo();
  return outcome;
}

}  // namespace kernelpro::app
