// A suite's results read back from its directory, as `suite status` and `suite report` need them:
// the state of every task, and per problem one row (the best of its seeds in optimize mode, its
// best correct candidate in eval mode) with the statistics' inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "report/suite_report.h"
#include "suite/suite_dir.h"
#include "suite/task_costs.h"

namespace kernelpro::suite {

// A task as `suite status` shows it.
struct TaskProgress {
  std::string id;
  TaskStatus status;
  TaskCosts costs;  // finished tasks (done or failed) only: nothing known of the others
};

// Counts and timing of a suite's tasks now.
struct SuiteProgress {
  int total = 0, done = 0, failed = 0, running = 0, interrupted = 0, pending = 0, damaged = 0;
  int correct = 0;  // done tasks with a correct kernel
  // From when work on the suite first began (its builds included: suite/session.h) to now, or to
  // the last finish once nothing is left.
  double elapsed_s = 0;
  // Estimate: the mean wall time of the finished tasks (those whose time is known: TaskCosts)
  // x tasks left / the tasks the workers run at once.
  std::optional<double> remaining_s;
  // What the running workers are doing ("building 11 candidates, 2 at a time") and for how long.
  std::vector<std::pair<std::string, double>> phases;
  std::vector<TaskProgress> tasks;  // in manifest order
};
SuiteProgress ReadProgress(const SuiteDir& dir, const SuiteManifest& manifest, int parallel = 0);

// The finished tasks that took longest, slowest first (ties in manifest order): at most `n`, of
// those whose wall time is known.
std::vector<const TaskProgress*> SlowestTasks(const SuiteProgress& progress, std::size_t n);

// "eager" or "compile" (`--baseline`): what the rows' speedups are against. Against torch.compile
// a row's speedup is its speedup over eager divided by torch.compile's own speedup over eager,
// measured once per problem and GPU model (the task result's "baselines").
Result<report::SuiteReportInput> ReadSuiteReport(const SuiteDir& dir, const SuiteManifest& manifest,
                                                 const std::string& baseline);

// Whether suite `a` may be compared with suite `b` (`suite report --compare`). InvalidArgument,
// naming both, when their results were judged by different correctness criteria (or one suite by
// several): a kernel correct under one may be incorrect under the other, so the pairs would not
// measure the same thing. Otherwise the caveats the comparison must state: a side whose criterion
// is unrecorded, or timing methods that differ.
Result<std::vector<std::string>> ComparisonCaveats(const report::SuiteReportInput& a,
                                                   const report::SuiteReportInput& b);

// The statistics' view of the rows.
std::vector<report::ScoredProblem> Scores(const std::vector<report::SuiteProblemRow>& rows);

}  // namespace kernelpro::suite
