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
//   optimize  a child `kernelpro optimize --problem P --run-dir tasks/<task>/run ...` (or
//             `kernelpro resume` of that run when it already recorded exchanges: nothing redone),
//             on one GPU of the pool; the task's result is the run's best kernel as the run
//             measured it.
//
// Tasks run `parallel` at a time: one per GPU of `gpus`, or `parallel` on a CPU suite.
// RunShard returns when every task of the shard has a result or is held by another process. A
// missing device (Unavailable) stops the shard at once with that error, leaving the task pending:
// it is the machine's fault, and every other task would fail the same way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/executor.h"
#include "suite/suite_dir.h"

namespace kernelpro::suite {

struct RunnerOptions {
  int shard = 0;
  int shards = 1;
  std::vector<std::string> gpus;  // this process's GPUs (ordinals); empty: the default device
  int parallel = 1;               // tasks at once without GPUs (CPU suites)
  bool retry_failed = true;       // rerun tasks whose result is "error"
  // eval: the executor (its options from the manifest, its GPUs `gpus`); required in eval mode.
  eval::Executor* executor = nullptr;
  // optimize: the kernelpro binary the children run ("" = this process's own executable).
  std::string kernelpro;
  // optimize: appended to every child's arguments (this machine's --python, --cache-dir, ...).
  std::vector<std::string> child_args;
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

// The running kernelpro binary (what optimize children and Slurm array tasks run).
std::string SelfExecutable();

// The argv of the child that runs an optimize task: `kernelpro resume RUN` when the run
// directory already holds a run store, else `kernelpro optimize ...` with the manifest's
// options ("{problem}" and "{seed}" in them replaced by the problem's name and the task's seed).
std::vector<std::string> OptimizeArgv(const SuiteDir& dir, const SuiteManifest& manifest,
                                      const SuiteTask& task, const std::string& kernelpro,
                                      const std::string& gpu,
                                      const std::vector<std::string>& child_args = {});

}  // namespace kernelpro::suite
