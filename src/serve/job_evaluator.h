// JobEvaluator: what runs one job for the server's queue (job_queue.h), behind an interface so
// that the queue, the journal and the HTTP layer are tested with a fake, and the production one
// (executor_evaluator.h) is the only part that starts processes.
#pragma once

#include <cstddef>

#include "core/json_io.h"
#include "core/status.h"
#include "serve/job.h"

namespace kernelpro::serve {

class JobEvaluator {
 public:
  virtual ~JobEvaluator() = default;
  // How many jobs may run at once: one per GPU (one on the CPU), so that no two timings ever
  // share a device.
  virtual std::size_t slots() const = 0;
  // Evaluates `job` on slot `slot`, which no other job uses meanwhile; `id` is the job's (for
  // names of files). The verdict (`kernelpro eval --json`'s object), or why there is none:
  // InvalidArgument or NotFound when the problem cannot be evaluated (it does not load, is not
  // deterministic, its inputs fail), any other code when the server failed.
  virtual Result<Json> Evaluate(std::size_t slot, const std::string& id, const EvalJob& job) = 0;
  // Work ahead of the next job on `slot` while it is idle (blank workers, the referee); called
  // by the slot's thread before it waits for a job. Never fails: what it could not prepare is
  // done by the job itself.
  virtual void PrepareSlot(std::size_t /*slot*/) {}
  // What GET /v1/health adds about the evaluator (its blank workers, ...).
  virtual Json Facts() const { return Json::object(); }
};

}  // namespace kernelpro::serve
