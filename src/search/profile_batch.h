// The profile step's batch with several GPUs (RunConfig::gpus > 1), out of the algorithm's file:
// which children of an iteration still need a profile, and those profiles taken at once, up to
// one per GPU. The orchestrator journals their steps started before the batch runs and does the
// rest of each step (analysis, the profiling agent's call, the rows) child by child afterwards, as
// with one GPU (search/orchestrator.h).
//
// Thread-safety: called from the orchestrator's thread; ProfileAtOnce calls the evaluator's
// Profile from up to `gpus` threads (search/candidate_evaluator.h allows it), never the store.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "profile/metrics.h"
#include "search/candidate_evaluator.h"
#include "search/journal.h"
#include "search/node_info.h"
#include "store/run_layout.h"

namespace kernelpro::search {

// The journal key of a candidate's evaluate and profile steps: "candidate:ID".
std::string CandidateStepKey(std::int64_t candidate_id);

// The candidates the profile step of `iteration` would profile afresh: correct, their step not
// done, their source not profiled by an earlier iteration; a candidate twice in the iteration once.
Result<std::vector<std::int64_t>> CandidatesToProfile(Journal& journal, int iteration,
                                                      const std::vector<NodeInfo>& children);

// The profiles of the children's candidates `ids` (their files under `layout`), up to `gpus` at a
// time; an evaluator that throws gives that candidate an Internal error.
std::map<std::int64_t, Result<profile::Metrics>> ProfileAtOnce(
    CandidateEvaluator& evaluator, const std::string& problem, const store::RunLayout& layout,
    const std::vector<NodeInfo>& children, const std::vector<std::int64_t>& ids, int gpus);

}  // namespace kernelpro::search
