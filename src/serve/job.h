// One evaluation the server was asked for, and what it answers about it.
//
//   EvalJob     what a POST /v1/eval carries: the problem's and the candidate's sources, and the
//               request's options as resolved (eval::EvalOptions; request_options.h)
//   JobState    queued ─► running ─► done | failed;  queued ─► cancelled (the server drains);
//               queued | running ─► interrupted (the server died; found in its journal)
//   JobRecord   what GET /v1/jobs/{id} answers, and what the journal keeps of a finished job
#pragma once

#include <optional>
#include <string>

#include "core/json_io.h"
#include "eval/eval_options.h"

namespace kernelpro::serve {

struct EvalJob {
  std::string problem_source;
  std::string candidate_source;
  eval::EvalOptions options;  // the server's defaults with the request's options applied
};

enum class JobState { kQueued, kRunning, kDone, kFailed, kCancelled, kInterrupted };

// "queued", "running", "done", "failed", "cancelled", "interrupted".
const char* JobStateName(JobState state);
std::optional<JobState> JobStateFromName(const std::string& name);
// Done, failed, cancelled or interrupted: nothing will change it any more.
bool Finished(JobState state);

struct JobRecord {
  std::string id;
  JobState state = JobState::kQueued;
  Json result;        // done: the verdict, the object `kernelpro eval --json` prints
  std::string error;  // failed, cancelled, interrupted: why, one line
  // failed: the answer a waiting request gets: 422 when the problem or request could not be
  // evaluated (the problem does not load, is not deterministic), 500 when the server failed.
  int http_code = 0;
};

// {"job", "state", "result" (done), "error" (otherwise, when there is one)}: the API's form, and
// the journal's (with "http_code").
Json ToJson(const JobRecord& record, bool with_code = false);
// The journal's line back; nullopt when it is not one.
std::optional<JobRecord> JobRecordFromJson(const Json& json);

}  // namespace kernelpro::serve
