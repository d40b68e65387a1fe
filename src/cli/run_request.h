// A run handed to a child process. `kernelpro optimize --run-request FILE` ("-": stdin; a hidden
// option) reads one request and runs it the way `kernelpro optimize` runs a new run, or
// `kernelpro resume` a run that began, both ending in app::RunSearch (app/run.h). `kernelpro suite
// optimize` runs each task so, in a child process of its own: a crash, a hang or a leak of one run
// cannot take the shard down, and a run's directory lock and termination note belong to its own
// process (suite/runner.h).
//
// The request is one JSON object:
//   {"start": "optimize", "config": RUN_CONFIG, "nvml_library": "", "unsafe_no_sandbox": false}
//       a new run. RUN_CONFIG is search::ToJson(RunConfig), its LLM resolved, made by the parent
//       from the suite's optimize options, read once as `kernelpro optimize` reads its own, with
//       the task's and this machine's laid over (app/suite_task.h). The child parses no options:
//       it checks what optimize checks before it starts a run (a run already in the directory,
//       app::CheckRunReady) and starts it with app::StartNewRun.
//   {"start": "resume", "run_dir": DIR, "gpus": ["0"], "python": "", "unsafe_no_sandbox": false}
//       the run DIR holds, continued as `kernelpro resume DIR` with this machine's GPUs,
//       interpreter and sandbox ("" and [] keep the run's own).
// A child shows no progress display (its output is the task's log); its messages and exit codes
// are those of optimize and resume.
#pragma once

#include <functional>
#include <string>

#include "app/suite_task.h"
#include "cli/optimize_command.h"
#include "core/json_io.h"
#include "core/status.h"
#include "core/subprocess.h"
#include "suite/runner.h"

namespace kernelpro::cli {

// `kernelpro optimize --run-request SOURCE`: reads the request from the file SOURCE ("-": stdin)
// and runs it. The exit code, as optimize's or resume's.
int RunRequestCommand(const std::string& source);

using app::SuiteMachine;

// optimize's options as its command line reads them (the last of an option wins), and which of
// --problem and --run-dir they named; a usage error is InvalidArgument with optimize's line.
struct ParsedOptimizeOptions {
  OptimizeArgs args;  // seed_given set
  bool problem_given = false;
  bool run_dir_given = false;
};
Result<ParsedOptimizeOptions> ParseOptimizeOptions(const std::vector<std::string>& options);

// The suite's optimize options (suite::OptimizeTaskRun::options) read as `kernelpro optimize` reads
// its own (ReadRunConfig), into the run every task's starts from (app/suite_task.h). Options that
// make no run are InvalidArgument with the line optimize would print ("kernelpro optimize: ...").
Result<app::SuiteRun> SuiteRunFromOptions(const std::vector<std::string>& options);

// The request of one optimize task (see above; app::TaskRequest of SuiteRunFromOptions).
Result<Json> SuiteTaskRequest(const suite::OptimizeTaskRun& task, const SuiteMachine& machine);

// The child process of an optimize task (suite::RunnerOptions::optimize_child): this binary's
// `optimize --run-request -`, SuiteTaskRequest on its stdin.
std::function<Result<ProcessOptions>(const suite::OptimizeTaskRun& task)> SuiteTaskChild(
    SuiteMachine machine);

}  // namespace kernelpro::cli
