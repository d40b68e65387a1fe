// What the executor's parts (executor.h) share about the steps of an evaluation's candidates: the
// candidates themselves as every part sees them (CandidateBatch), how a step is reported as
// progress ("cand 2/3 cuda_swish.py: building", CandidateStep), the limits of a worker step's
// process, how a worker that failed becomes the candidate's verdict, and how findings of the scan
// and of the workers merge into it.
//
// Threading: plain functions. One evaluation's threads (builds, one device thread per GPU) share
// its CandidateBatch, each writing only the elements of the candidate it holds; a CandidateStep
// and an AskSession belong to the thread that holds the candidate.
#pragma once

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/progress.h"
#include "core/subprocess.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "eval/worker_client.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

// One evaluation's candidates: element i of each vector is the i-th candidate given.
struct CandidateBatch {
  std::vector<EvalResult> results;  // their verdicts, filled in step by step
  std::vector<ProgressStep> items;  // how progress lines name each: "cand 2/3 cuda_swish.py"
  // Whether each is still in the running (no verdict yet). Not vector<bool>: the build threads
  // write their own elements concurrently.
  std::vector<char> proceed;

  // A batch of `paths`, every candidate in the running, no verdict yet.
  static CandidateBatch Of(const std::vector<std::string>& paths);
  // The candidates still in the running, in order.
  std::vector<std::size_t> Pending() const;
};

double SecondsSince(std::chrono::steady_clock::time_point start);
// `path` made absolute and normal: what the worker steps and the sandbox are told.
std::string AbsolutePath(const std::string& path);
// The limits of a worker step's process that may run `timeout_s` of wall-clock time.
ProcessLimits StepLimits(int timeout_s);
// The limits of a candidate's process as a whole (the device runner's, the server's blank
// workers'): those of a step as long as a load that rebuilds plus a few steps, and no wall-clock
// limit (each request has its own).
ProcessLimits CandidateProcessLimits(const EvalOptions& options);

// The findings of a worker's result ("findings": [{rule, severity, message}]).
std::vector<Finding> FindingsFrom(const Json& result);
// Appends findings not already present. Returns the messages of the new 'fail' findings joined
// with "; " (empty when there are none): that is what a user reads as the reason.
std::string MergeFindings(std::vector<Finding>& into, const std::vector<Finding>& from);

// A worker that ended without a usable result: its result file could not be read (say so: the
// process itself was fine), or it died (ClassifyProcessFailure).
std::pair<EvalStatus, std::string> DescribeMissingResult(const std::string& step,
                                                         const WorkerOutcome& outcome);

// The fields of the reference step's result that the named steps need, inline in their requests.
Json PickFields(const Json& meta, std::initializer_list<const char*> keys);

// Sends a request to a session; returns the reply or records the failure in `result` (a dead
// worker is classified, a worker status mapped). A reply that found the reference's files
// changed sets `reference_changed` (when given) to its message instead.
std::optional<Json> AskSession(WorkerSession& session, const std::string& step, const Json& request,
                               int timeout_s, EvalResult& result,
                               std::string* reference_changed = nullptr);

// A candidate's step as its progress line names it: "cand 2/3 cuda_swish.py: building".
ProgressStep StepOf(const ProgressStep& item, const char* step);

// One step of a candidate, reported from construction until End() or destruction (every return
// path ends it), its outcome the candidate's verdict at that moment ("" while it is correct).
class CandidateStep {
 public:
  CandidateStep(ProgressSink* sink, ProgressStep step, const EvalResult& result);
  ~CandidateStep() { End(); }
  CandidateStep(const CandidateStep&) = delete;
  CandidateStep& operator=(const CandidateStep&) = delete;
  void End();
  void EndAs(const std::string& outcome);

 private:
  ProgressSink* sink_;
  ProgressStep step_;
  const EvalResult& result_;
};

}  // namespace kernelpro::eval
