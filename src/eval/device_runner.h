// The device runner: the extension point that runs one evaluation's device steps (class
// DeviceRunner, and the DeviceRun it begins per evaluation), and the production runner. A runner
// knows nothing of the executor: it gets what it needs as an EvalContext (eval_context.h), and
// reports each candidate's verdict, times and findings in the batch's results, which become the
// evaluation's. So a test may hand the executor a fake, recorded or decorated runner
// (Executor::set_device_runner) without editing it.
//
// The production runner (MakeWorkerDeviceRunner) runs each candidate wholly on one leased GPU of
// the context's gpu_pool, with that GPU's referee (referee.h), so that a speedup always compares
// two timings of one GPU:
//
//   lease a GPU ─► the candidate's sandboxed process (started ahead, or now) ─► the referee has
//   the evaluation's reference loaded (else loads it from the cache) ─► load (import, the cached
//   build, construct) ─► check trials ─► the referee compares ─► timing (device_timing.h) ─►
//   its progress item finished, its work directory removed, the lease returned
//
// A step that finds the reference's cached files changed on disk makes the runner recompute the
// reference (once for all of the evaluation's threads: SharedReference) and check the candidate
// again from the start; a second change is the candidate's failure.
//
// Threading: a DeviceRunner is shared by copies of an executor and may begin runs from several
// threads at once; a DeviceRun serves one evaluation, driven from one thread. The production
// run's RunAll is the device pool: ParallelFor (core/parallel.h) over the pending candidates on
// one thread per GPU, so each GPU runs one candidate at a time; the GPUs are leased to the
// candidates in candidate order as they free up (as if each thread leased a GPU and then took the
// next pending candidate). With one GPU, the next candidate's process starts while the current one
// is on the device (it touches no device before its first request), so its interpreter and torch
// import cost no waiting.
#pragma once

#include <memory>
#include <string>

#include "eval/candidate_step.h"
#include "eval/eval_context.h"
#include "eval/referee.h"

namespace kernelpro::eval {

// One evaluation's device steps, begun by DeviceRunner::Begin.
class DeviceRun {
 public:
  virtual ~DeviceRun() = default;
  // Runs the device steps of every candidate of the batch still in the running (its Pending()),
  // writes each one's verdict into its result and finishes its progress item; returns when all
  // are done. `reference` is the evaluation's (recomputed there, if it must be).
  virtual void RunAll(SharedReference& reference) = 0;
};

class DeviceRunner {
 public:
  virtual ~DeviceRunner() = default;
  // Begins the device steps of `batch`'s candidates against `problem` (an absolute path), once
  // the static checks have run and before the builds and the reference step: a runner may start
  // work ahead here (the production one, with one GPU, starts the first pending candidate's
  // process and CUDA there, beside the builds; nothing is timed on the device before its turn).
  // `context` and `batch` outlive the run.
  virtual std::unique_ptr<DeviceRun> Begin(const EvalContext& context, const std::string& problem,
                                           CandidateBatch& batch) = 0;
};

// The production runner: worker processes on the GPUs of the context's pool, judged by the
// referees of `referees` (the executor's, shared with its reference step).
std::shared_ptr<DeviceRunner> MakeWorkerDeviceRunner(std::shared_ptr<Referees> referees);

}  // namespace kernelpro::eval
