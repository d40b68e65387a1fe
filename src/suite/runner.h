// Runs a suite's tasks (one shard of them) in this process: what `kernelpro suite eval|optimize`
// does on one host, `kernelpro suite run` in each task of a Slurm job array, and `resume` again.
//
// Life of a task: skipped when its result is there (or, for a failed task, unless retrying);
// claimed (suite_dir.h; a task another live process holds is left to it); run; its result
// written atomically; its claim released. While tasks run, a heartbeat thread keeps this
// process's claims fresh, so other hosts can tell a live claim from a dead one.
//
//   eval      every candidate of the problem is evaluated by the executor on its own, and its
//             verdict written to tasks/<task>/candidates/NNN.json as soon as it is known, so a
//             kill loses at most the candidate being evaluated (its build is cached); the task's
//             result is the best correct candidate.
//   optimize  one run (app/run.h) per task in a child process of its own, on one GPU of the
//             pool: a new run of the problem into tasks/<task>/run with the suite's optimize
//             options, or the continuation of that run when it already began (nothing redone).
//             The command line makes the child (RunnerOptions::optimize_child: this binary, handed
//             the run as a request on its stdin, cli/run_request.h); the task's result is the
//             run's best kernel as the run measured it.
//
// Tasks run `parallel` at a time: one per GPU of `gpus`, or `parallel` on a CPU suite.
// RunShard returns when every task of the shard has a result or is held by another process. A
// missing device (Unavailable) stops the shard at once with that error, leaving the task pending:
// it is the machine's fault, and every other task would fail the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "core/subprocess.h"
#include "eval/executor.h"
#include "suite/suite_dir.h"

namespace kernelpro::suite {

// One optimize task as its child process is to run it.
struct OptimizeTaskRun {
  // The run directory already holds a run store: the child continues that run with the options
  // it was created with (only this machine's change).
  bool resume = false;
  std::string problem;  // the problem file
  std::string run_dir;  // tasks/<task>/run
  // The task's seed, when the suite sends seeds to the model (its option "seeded"); else none.
  std::optional<std::uint64_t> seed;
  // The suite's optimize options (the manifest's "args", as `kernelpro optimize` reads them),
  // "{problem}" and "{seed}" replaced by the problem's name and the task's seed.
  std::vector<std::string> options;
  std::string gpu;  // the GPU ordinal leased for it; "" = the default device
};

struct RunnerOptions {
  int shard = 0;
  int shards = 1;
  // What the suite lock (suite_lock.h) says holds it: "suite eval", "suite resume", "suite run".
  std::string command = "suite run";
  std::vector<std::string> gpus;  // this process's GPUs (ordinals); empty: the default device
  int parallel = 1;               // tasks at once without GPUs (CPU suites)
  bool retry_failed = true;       // rerun tasks whose result is "error"
  // eval: the executor (its options from the manifest, its GPUs `gpus`); required in eval mode.
  eval::Executor* executor = nullptr;
  // optimize: the child process that runs a task, its argv and what it reads on stdin (the
  // command line's: cli/run_request.h). An error (the suite's options make no run) fails the task
  // with its message. Required in optimize mode.
  std::function<Result<ProcessOptions>(const OptimizeTaskRun& task)> optimize_child;
  // eval: after each candidate's verdict is saved (tests stop the process there, to prove that a
  // suite killed mid-task resumes with nothing lost or redone). Null: nothing.
  std::function<void()> after_verdict;
  // Facts about the machine a task ran on, stored with its result (suite/environment.h);
  // called once per GPU ordinal ("" = the default device).
  std::function<Json(const std::string& gpu)> environment;
  // The problem's eager and torch.compile baselines (suite/baselines.h) stored with each task's
  // result, or an object with "error"; null: not measured. `environment` is the task's
  // (`environment` above): its GPU model keys the cache.
  std::function<Json(const SuiteProblem& problem, const std::string& sha256,
                     const Json& environment)>
      baselines;
  // One line per task started and finished, and notes; null: silent.
  std::function<void(const std::string&)> say;
  // After each task's result is written (the suite's progress line).
  std::function<void()> after_task;
};

struct ShardSummary {
  int ran = 0;             // tasks run to a result here
  int already_done = 0;    // had a result before
  int held_elsewhere = 0;  // claimed by another live process
  int failed = 0;          // ran here and the task itself failed ("error")
};

Result<ShardSummary> RunShard(const SuiteDir& dir, const SuiteManifest& manifest,
                              const RunnerOptions& options);

// The aggregated result of an eval task from its candidates' verdicts (ToJson(EvalResult) each):
// status "correct" with the best correct candidate's speedup (ties: the earlier), else the
// furthest any candidate got ("incorrect" before "runtime_error"/"timeout" before
// "compile_error"), or "no_candidate".
Json EvalTaskResult(const SuiteDir& dir, const SuiteManifest& manifest, const SuiteTask& task,
                    const std::vector<Json>& verdicts);

// `text` with "{problem}" replaced by `problem` and "{seed}" by `seed`: one cassette (or any
// path) per problem and seed in a suite's options.
std::string ExpandPlaceholders(const std::string& text, const std::string& problem,
                               std::uint64_t seed);

// The running kernelpro binary (what optimize tasks' children and Slurm array tasks run).
std::string SelfExecutable();

// How the child of an optimize task is to run it on `gpu` (RunnerOptions::optimize_child).
OptimizeTaskRun OptimizeTask(const SuiteDir& dir, const SuiteManifest& manifest,
                             const SuiteTask& task, const std::string& gpu);

}  // namespace kernelpro::suite
