// The production JobEvaluator: one long-lived eval::Executor per slot (per GPU), so that what is
// safe to keep stays warm between requests: the slot's referee (torch imported, CUDA up, the
// problems' references loaded and digest-checked), the reference cache, the build cache and the
// precompiled headers. A candidate still gets a sandboxed process of its own, as in `eval`.
//
// With `blank_workers` > 0, each slot keeps that many blank candidate processes started ahead
// (candidate_pool.h) and hands each to one candidate.
//
// A job's files live under STATE: the problem at problems/<hash of its text>/problem.py (one
// path per problem, so a referee that has its reference loaded keeps it), the candidate at
// jobs/<id>/candidate.py, each alone in its folder (a sandbox sees a source's sibling .py files),
// the job's folder removed when it ends.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "eval/executor.h"
#include "serve/candidate_pool.h"
#include "serve/job_evaluator.h"

namespace kernelpro::serve {

// `per_slot`: one executor per slot, each with its own GPU (options.gpus of one ordinal; none on
// the CPU) and its own work_dir. Each job runs on its slot's executor WithOptions(job.options).
std::unique_ptr<JobEvaluator> MakeExecutorEvaluator(std::vector<eval::Executor> per_slot,
                                                    std::string state_dir, int blank_workers);

}  // namespace kernelpro::serve
