// A run's start around app::RunSearch (DESIGN.md §4, app/): the checks every run passes before its
// directory is touched, and a new run's directory — made, locked, and taken back when the run
// stopped before it recorded anything, so that the same start can simply be tried again.
//
//   CheckRunReady ....... cost limit, tools, LLM, device (app/preflight.h); the tools' registry
//   CheckNoRecordedRun .. the directory holds no run worth resuming
//   StartNewRun ......... directory, lock, a stale start replaced, RunSearch, undo when unrecorded
//
// `kernelpro optimize`, `kernelpro resume` and every task of `kernelpro suite optimize` start their
// runs here; nothing of it prints (the observer of RunOptions is told).
#pragma once

#include <string>

#include "app/run.h"
#include "core/status.h"
#include "search/run_config.h"
#include "tools/registry.h"

namespace kernelpro::app {

struct ReadyChecks {
  // The run began earlier (`kernelpro resume`): its tools and device were its own, and errors say
  // so.
  bool resumed = false;
  // Check that the cost limit can be reached (a new run with one; a resumed run given a new limit
  // or a new model).
  bool cost_limit = true;
};

// The checks before a run touches its directory, in order: the cost limit (when `checks` asks and
// the run has one), the tools (a bad plugin, rule file or threshold), the LLM and the device
// answer. The tools' registry, or the first failure in one line that names the fix.
Result<tools::ToolRegistry> CheckRunReady(const search::RunConfig& config,
                                          const ReadyChecks& checks = {});

// InvalidArgument "RUN_DIR already holds a run; continue it with: kernelpro resume RUN_DIR ..."
// when `run_dir` holds a run worth resuming (an LLM exchange); OK otherwise.
Status CheckNoRecordedRun(const std::string& run_dir);

// A new run of `config` (checked, its LLM resolved) in config.run_dir with `options` (resume is
// ignored): makes the directory and takes its lock (held while the run runs: no second run
// works there), replaces a start that stopped before its first LLM exchange (a note says so),
// refuses a directory that holds a recorded run, runs RunSearch, and takes back what it made when
// the run recorded nothing. A refusal goes to the observer's Failed and returns unfinished.
RunOutcome StartNewRun(const search::RunConfig& config, const RunOptions& options);

}  // namespace kernelpro::app
