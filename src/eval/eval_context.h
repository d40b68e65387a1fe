// EvalContext: what the parts of an evaluation below the executor (builder.h, device_runner.h,
// referee.h, device_timing.h, shape_step.h) are handed, as a value, instead of the executor that
// calls them: the options, the worker that runs steps, the request fields every step gets, the
// GPU pool every device step leases from, where progress goes, and how to get the precompiled
// headers builds are offered. The executor makes one when it is made and passes it down; a part
// never calls back into the executor, so a fake or remote part needs nothing of it.
//
// Threading: read-only once made; the parts share one from several threads. The GPU pool and the
// headers' functions are thread-safe; the progress sink is the caller's (core/progress.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/progress.h"
#include "eval/candidate_processes.h"
#include "eval/eval_options.h"
#include "eval/gpu_pool.h"
#include "eval/precompiled_headers.h"
#include "eval/worker_client.h"

namespace kernelpro::eval {

struct EvalContext {
  // `options` with its base request and a GPU pool of options.gpus; no progress, no headers.
  EvalContext(WorkerClient worker, EvalOptions options);

  WorkerClient worker;
  EvalOptions options;
  // device, init_seed, atol, rtol: the fields every step gets (no paths); BaseRequestOf(options).
  Json base_request;
  // The GPUs of options.gpus (one default slot without them). Lease one around every worker step
  // that uses the device and pass the lease's Env() to the step.
  std::shared_ptr<GpuPool> gpu_pool;
  // Where each step of each candidate is reported as it starts and ends; null: nowhere.
  ProgressSink* progress = nullptr;
  // The precompiled headers a build process is offered: the first call runs their step, later
  // callers wait for it (Executor::HeadersForBuilds). Unset: builds are offered none.
  std::function<PrecompiledHeaders(std::vector<std::string>* notes)> headers_for_builds;
  // What that step prepared so far, without running it (a candidate's load that rebuilds).
  std::function<PrecompiledHeaders()> prepared_headers;
  // Where candidates' processes come from (candidate_processes.h); null: each is started fresh.
  std::shared_ptr<CandidateProcesses> candidate_processes;
};

// The fields every step's request starts from: device, init_seed, atol, rtol.
Json BaseRequestOf(const EvalOptions& options);

// What a request to a process that imports `candidate` may carry besides the base request: its
// build scope (`build_root`), the inputs tree and its manifest, and the reference's metadata
// inline (`reference`: trials, output shapes and dtypes, aliasing, operators); never the
// reference directory or the cache directory. Empty when the candidate file cannot be read.
Json CandidateRequest(const EvalContext& context, const std::string& candidate,
                      const Json& reference);

// The headers of context.headers_for_builds (none when unset).
PrecompiledHeaders HeadersForBuilds(const EvalContext& context, std::vector<std::string>* notes);
// The headers of context.prepared_headers (none when unset).
PrecompiledHeaders PreparedHeaders(const EvalContext& context);

}  // namespace kernelpro::eval
