// Static checks: the worker's `scan` of the problem and of each candidate's source, the first step
// of an evaluation, before anything is built or touches a device. The scan reads a candidate in
// the sandbox without running it: a source that does not parse, or whose 'fail' findings say it
// games the harness (calls the reference's operators against the torch_ops_policy, patches
// timers, ...), gets its verdict here and costs no build; its 'warn' findings stay with it. A
// problem the scan cannot load stops the whole evaluation.
//
// Threading: runs on the caller's thread, one candidate after another (each scan is a short
// process); it may run while other evaluations run on other threads.
#pragma once

#include <string>
#include <vector>

#include "core/progress.h"
#include "core/status.h"
#include "eval/candidate_step.h"
#include "eval/eval_options.h"
#include "eval/worker_client.h"

namespace kernelpro::eval {

// Scans each candidate of `batch` (`paths`, as given) against `problem` (an absolute path), in
// order: sets its absolute path, its scan time and findings; one the scan refuses (or a missing
// file) gets its verdict and leaves the running, and then its progress item is finished. A non-OK
// status when the problem is broken or a scan could not run at all: the evaluation stops.
// With options.static_checks off, 'fail' findings refuse nothing and are kept as warnings.
Status RunStaticChecks(const WorkerClient& worker, const EvalOptions& options,
                       const std::string& problem, const std::vector<std::string>& paths,
                       ProgressSink* progress, CandidateBatch& batch);

}  // namespace kernelpro::eval
