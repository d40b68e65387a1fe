// The device runner: one evaluation's device steps, each candidate wholly on one leased GPU of
// the executor's gpu_pool(), with that GPU's referee (referee.h), so that a speedup always
// compares two timings of one GPU:
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
// Threading: RunAll is the device pool: ParallelFor (core/parallel.h) over the pending candidates
// on one thread per GPU, so each GPU runs one candidate at a time; the GPUs are leased to the
// candidates in candidate order as they free up (as if each thread leased a GPU and then took the
// next pending candidate). With one GPU, the next candidate's process starts while the current one
// is on the device (it touches no device before its first request), so its interpreter and torch
// import cost no waiting. A DeviceRunner serves one evaluation, driven from one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/candidate_step.h"
#include "eval/executor.h"
#include "eval/referee.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

class DeviceRunner {
 public:
  using Env = std::map<std::string, std::string>;

  // The device steps of `batch`'s candidates against `problem` (an absolute path). Each
  // candidate's process writes into a work directory of its own, unique per evaluation (several
  // may run concurrently in one process), created empty before its process starts.
  DeviceRunner(const Executor& executor, Referees& referees, std::string problem,
               CandidateBatch& batch);

  // With one GPU, starts the first pending candidate's process now, beside the builds and the
  // reference step, and starts CUDA there too: nothing is timed on the device before its turn.
  void StartFirstAhead();
  // Runs the device steps of every candidate still in the running and finishes its progress item;
  // returns when all are done. `reference` is the evaluation's (recomputed there, if it must be).
  void RunAll(SharedReference& reference);

 private:
  void RunCandidate(const std::vector<std::size_t>& pending, std::size_t k,
                    const GpuPool::Lease& lease, SharedReference& reference);
  // With one GPU: the process started ahead for candidate `i`, if any (one started for another
  // candidate is ended).
  std::unique_ptr<WorkerSession> TakeAhead(std::size_t i);
  std::string WorkDir(std::size_t i) const;
  // Starts the sandboxed process of one candidate, writing into `work`. It imports torch at once
  // but, without `prepare_device`, touches no device until its first request, so it may start
  // ahead, while another candidate is on the GPU. It sees its source, its build scope, the
  // problem (it times the reference too, for the spread between processes), CACHE/inputs,
  // `work`, and CACHE/pch read-only (a stale build record makes its load rebuild, with the
  // headers builds are offered).
  // `prepare_device`: it starts CUDA before its first request too; only for a process started
  // while nothing is timed on its GPU (a context being made disturbs timings).
  Result<std::unique_ptr<WorkerSession>> StartCandidate(const std::string& candidate,
                                                        const std::string& work, const Env& env,
                                                        bool prepare_device = false) const;

  // Check, compare and time one candidate; when a step reports the reference's files changed on
  // disk, recomputes the reference (once) and starts over. `session` is the candidate's process
  // when one was started ahead (consumed), else null. `item` names the candidate in the progress.
  void CheckAndTime(SharedReference& shared, const std::string& work, const Env& env,
                    EvalResult& result, std::unique_ptr<WorkerSession> session,
                    const ProgressStep& item);
  // One attempt of CheckAndTime; returns what changed when a step found the reference's files
  // changed on disk, else "".
  std::string CheckAndTimeOnce(const Json& reference, const std::string& work, const Env& env,
                               EvalResult& result, std::unique_ptr<WorkerSession> session,
                               const ProgressStep& item);
  // This GPU's referee may not have loaded this reference yet (it was prepared on another GPU, or
  // the referee was restarted): loads it there from the cache. False when the candidate's steps
  // end here: `result` says why, or `changed` that the reference loaded here differs.
  bool LoadReferenceHere(const Json& reference, const Env& env, EvalResult& result,
                         std::string& changed);
  // Load and the check trials in the candidate's process: their outputs, or none when the
  // candidate's steps end here (`result` or `changed` says why). `start` is the check's start.
  std::optional<Json> LoadAndCheck(WorkerSession& candidate_process, const Json& candidate,
                                   const Json& reference, const std::string& work,
                                   std::chrono::steady_clock::time_point start, EvalResult& result,
                                   std::string& changed);
  // The referee compares the check's outputs with the reference; false when the candidate failed.
  bool Compare(WorkerSession& referee, const Json& reference, const Json& checked,
               const std::string& work, std::chrono::steady_clock::time_point start,
               EvalResult& result, std::string& changed);

  const Executor& executor_;
  const EvalOptions& options_;
  Referees& referees_;
  const std::string problem_;
  CandidateBatch& batch_;
  const bool single_device_;
  std::string work_prefix_;
  // With one GPU: the process started ahead, and the candidate it is for.
  std::unique_ptr<WorkerSession> ahead_;
  std::optional<std::size_t> ahead_for_;
};

}  // namespace kernelpro::eval
