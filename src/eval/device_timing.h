// Timing on a device lease: the steps that time calls, run by the device runner
// (device_runner.h) and the baselines' measurement (Executor::MeasureBaselines).
//
//   a candidate:  interleaved rounds, a block of each side per round (A B B A A B ...): the
//                 referee times the reference, the candidate's process the candidate (and the
//                 reference again, for the spread between processes) ─► the referee verifies the
//                 sampled timed calls on their very inputs ─► speedup with a round-bootstrap
//                 interval; then, when asked for, torch.compile timed as the candidate was
//   baselines:    the referee times eager and torch.compile of the problem in interleaved rounds
//
// Both sides of a comparison are timed the same way: from the device's activity records where
// both processes can read them; when one cannot, the rounds start over with CUDA events on both
// sides, and a warning says so. The numbers' treatment is timing_stats.h.
//
// Threading: each call uses the sessions it is given, from the thread that holds their GPU's
// lease (one caller per session); calls share nothing.
#pragma once

#include <string>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/eval_context.h"
#include "eval/timing_stats.h"
#include "eval/verdict.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

// Times the candidate (its process `candidate`, which has loaded and passed its check; its
// requests start from `candidate_request`) against the reference on `referee`, writing the timed
// calls' outputs under `work`/timed, and has the referee verify the sampled ones. Fills the timing
// fields of `result`. Returns false when the candidate failed (the failure recorded in `result`)
// or when a step found the reference's files changed on disk (then `changed` says what).
bool TimeAgainstReference(const EvalContext& context, const std::string& problem,
                          const Json& reference, WorkerSession& referee, WorkerSession& candidate,
                          const Json& candidate_request, const std::string& work,
                          EvalResult& result, std::string& changed);

// --compile-baseline: torch.compile(Model) timed by the referee as the candidate was; its times
// and speedup go into `result`, or `result.compiled_note` says why there are none.
void TimeCompiledBaseline(const EvalContext& context, const std::string& problem,
                          WorkerSession& referee, EvalResult& result);

// The problem's own baselines (BaselineTimes) on `referee`, which has loaded its reference; `gpu`
// names the GPU it runs on.
Result<BaselineTimes> TimeBaselines(const EvalContext& context, const std::string& problem,
                                    WorkerSession& referee, const std::string& gpu);

}  // namespace kernelpro::eval
