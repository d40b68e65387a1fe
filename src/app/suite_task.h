// A `kernelpro suite optimize` task's run (DESIGN.md §4, app/): the suite's optimize options, read
// into one run's configuration the way `kernelpro optimize` reads its own (cli/run_request.h), and
// each task's problem, run directory, seed and GPU and this machine's interpreter, cache and
// sandbox laid over it here. The result is the request the task's child process runs
// (`kernelpro optimize --run-request -`): a run configuration, never a command line, so the child
// parses no options and starts its run exactly as optimize starts one (app/new_run.h).
#pragma once

#include <string>

#include "core/json_io.h"
#include "core/status.h"
#include "search/run_config.h"
#include "suite/runner.h"

namespace kernelpro::app {

// The suite's optimize options as a run: what every task's run starts from.
struct SuiteRun {
  search::RunConfig config;
  // What the options themselves name, which then wins over the task's (they would come later on
  // optimize's command line, and the last of an option wins there).
  bool problem_given = false;
  bool run_dir_given = false;
  bool seed_given = false;
};

// This machine's options for a suite's runs (`suite run|resume|eval|optimize`).
struct SuiteMachine {
  std::string python;              // --python; "": a new run's default, a resumed run's own
  std::string cache_dir;           // --cache-dir for new runs; "": the default
  bool unsafe_no_sandbox = false;  // --unsafe-no-sandbox
};

// A new task run's configuration: `suite` with the task's problem, run directory and seed where
// the suite's options give none, then this machine's GPU (the task's lease), interpreter, cache
// and sandbox. InvalidArgument for a GPU ordinal that is not one.
Result<search::RunConfig> TaskRunConfig(const SuiteRun& suite, const suite::OptimizeTaskRun& task,
                                        const SuiteMachine& machine);

// The request of a task's child (cli/run_request.h):
//   {"start": "optimize", "config": RUN_CONFIG, "nvml_library": ..., "unsafe_no_sandbox": ...}
// for a new run (TaskRunConfig), or, for a task whose run began,
//   {"start": "resume", "run_dir": DIR, "gpus": [GPU], "python": ..., "unsafe_no_sandbox": ...}.
// `suite` is read only for a new run.
Result<Json> TaskRequest(const SuiteRun& suite, const suite::OptimizeTaskRun& task,
                         const SuiteMachine& machine);

}  // namespace kernelpro::app
