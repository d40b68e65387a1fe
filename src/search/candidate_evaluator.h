// The evaluation seam of the search: the orchestrator builds, checks, times and profiles
// candidates only through a CandidateEvaluator, so tests script verdicts without building
// anything. NewExecutorEvaluator is the real one (eval/executor.h and eval/profile_runner.h).
//
// Thread-safety: Evaluate is called from the orchestrator's thread only. Profile is called from up
// to RunConfig::gpus threads at once (the children of one iteration, never during an Evaluate): an
// implementation must allow concurrent Profile calls. The executor's does; each of its profiles
// leases a GPU of the executor's pool.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/executor.h"
#include "eval/profile_runner.h"
#include "profile/metrics.h"

namespace kernelpro::search {

class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // One verdict per candidate file, in order. An error means the evaluation could not run at all
  // (a broken problem, no device); a failed candidate is a verdict.
  virtual Result<std::vector<eval::EvalResult>> Evaluate(
      const std::string& problem, const std::vector<std::string>& candidates) = 0;
  // The profile of a correct candidate; may come back with notes and no views.
  virtual Result<profile::Metrics> Profile(const std::string& problem,
                                           const std::string& candidate) = 0;
};

// Executor::Evaluate and ProfileCandidate. The executor must outlive it.
std::unique_ptr<CandidateEvaluator> NewExecutorEvaluator(eval::Executor& executor,
                                                         eval::ProfileOptions profile = {});

}  // namespace kernelpro::search
