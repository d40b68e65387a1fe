// The shape step of one candidate (eval/shape_check.h): its process runs each shape variant the
// reference step prepared (a ModelNew of its own per variant, from the variant's init inputs),
// then the referee compares the outputs with the reference's by the evaluation's criterion. Never
// timed. A variant the candidate fails, crashes on or raises on is recorded in result.shapes; the
// verdict itself is left to the caller (device_runner.h).
//
// Threading: runs on the device thread that holds the candidate's GPU lease.
#pragma once

#include <string>

#include "core/json_io.h"
#include "eval/eval_context.h"
#include "eval/verdict.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

// The reference's shape mode and variants (its "shapes"), as checks not yet run.
ShapeChecks PlannedShapeChecks(const Json& reference);

// Fills result.shapes. `candidate_request` is the candidate's CandidateRequest, `work` its work
// directory. Sets `changed` when a step found the reference's files changed on disk.
void CheckShapes(const EvalContext& context, const std::string& problem, WorkerSession& referee,
                 WorkerSession& candidate_process, const Json& candidate_request,
                 const Json& reference, const std::string& work, EvalResult& result,
                 std::string& changed);

}  // namespace kernelpro::eval
