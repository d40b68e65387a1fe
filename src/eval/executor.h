// The executor: evaluates candidates against a problem, end to end, the way kernelpro trusts.
//
//   scan (static checks) ─► inputs probe (can the problem make its inputs? before any build) ─►
//   reference (in the referee, cached per problem) ─► build (parallel, cached, beside the
//   reference) ─► one candidate process: load, check ─► the referee compares ─► timing in
//   interleaved rounds (the referee times the reference, the candidate's process the candidate,
//   block after block on one GPU) ─► the referee verifies a sample of the timed calls ─► speedup
//   with a round-bootstrap interval
//
// Evaluate is those steps in order; each part has its own file, below this one (none of them
// includes executor.h: they get what they need as an EvalContext, never the executor):
//   eval_options.h     the options (a commented default per field) and their stored form
//   eval_context.h     what the parts are handed: options, worker, base request, GPU pool, progress
//   static_checks.h    the scan of the problem and each candidate, before anything is built
//   builder.h          class Builder: a candidate's build (or its cached build); the build pool
//   referee.h          the referees (one trusted process per GPU) and the reference step
//   device_runner.h    class DeviceRunner: the candidates' device steps on GPU leases
//   device_timing.h    the interleaved timing rounds, their verification, the baselines
//   timing_stats.h     the statistics of the timed calls: rounds plan, summaries, speedup interval
//   candidate_step.h   what the parts share: the batch of candidates, progress, worker failures
//
// The builder and the device runner are extension points (TVM meta_schedule's Builder and Runner):
// the executor makes the production ones (the worker's processes) and a caller may replace either
// (set_builder, set_device_runner) with a fake, recorded or decorated one, editing nothing here.
//
// Two kinds of worker process (worker_session.h). The referee, one per GPU, lives as long as the
// executor and never imports a candidate: it computes or loads the reference, compares outputs,
// times the reference and verifies timed calls, so nothing a candidate patches at import can
// change a verdict. Each candidate gets one process of its own, in the sandbox, that imports it
// once and serves its check and all its timed calls; so a candidate costs one process start-up
// (plus a build process when its build is not cached). The first build that needs a process runs
// the trusted `pch` step first, once per executor (precompiled_headers.h); every later build and
// candidate process is offered its headers. Nothing a candidate can write is trusted:
// its process is told where the problem's inputs are (CACHE/inputs/<key>) and gets the
// reference's metadata inline, never where the expected outputs are (CACHE/references/<key>);
// every reference file is checked against the content hashes the reference step reported before
// it is used, and a step that finds one changed makes the executor recompute the reference and
// check the candidate again; outputs cross processes as plain data, never pickles. A candidate's
// builds go to its own scope, CACHE/builds/<hash of its source>. A candidate that crashes, hangs
// or floods is classified and the next evaluation is unaffected. Builds run on `jobs` threads.
//
// Every timed call, on either side, gets input values no earlier call has seen (timing.py in the
// worker): a cache of results, in memory or on disk, never hits, and the referee checks a random
// sample of the candidate's timed calls against the reference on their very inputs.
//
// Device steps run on the GPUs of `gpus` (one GPU each: CUDA_VISIBLE_DEVICES=<ordinal> in the
// worker's environment), one candidate at a time per GPU. With several GPUs, one thread per GPU
// takes the next pending candidate and runs all of its device steps on its GPU, with that GPU's
// referee, so a speedup always compares two timings of one GPU. Results come back in candidate
// order, each naming its GPU. Without `gpus` everything runs on the process's default device, one
// candidate at a time. The GPUs are leased from gpu_pool(), which the profiler
// (profile_runner.h) leases from too, so a profile and an evaluation running from different
// threads never share a GPU.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/progress.h"
#include "core/status.h"
#include "eval/builder.h"
#include "eval/device_runner.h"
#include "eval/eval_context.h"
#include "eval/eval_options.h"
#include "eval/gpu_pool.h"
#include "eval/precompiled_headers.h"
#include "eval/timing_stats.h"
#include "eval/verdict.h"
#include "eval/worker_client.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

class Referees;  // referee.h: one referee session per GPU, shared by copies of an executor

struct EvalReport {
  std::string problem;
  Json reference;  // the reference step's metadata: trials, vacuity, fp64 error, notes, manifests
  std::vector<EvalResult> results;  // one per candidate, in the order given
};

// Thread-safe: Evaluate, PrepareReference, Build and the profiler may run from several threads at
// once (copies of an Executor share its GPU pool).
class Executor {
 public:
  Executor(WorkerClient worker, EvalOptions options);

  // A non-OK status means the evaluation itself could not run: a broken or nondeterministic
  // problem, a missing device. Candidate failures are results, not errors.
  Result<EvalReport> Evaluate(const std::string& problem,
                              const std::vector<std::string>& candidates);

  // The pieces a profiler needs: the problem's reference (inputs and outputs, cached) and a built
  // candidate (`result.status` is kCorrect when it built and imports, `shared_objects` its .so).
  // The reference step runs on the first free GPU of gpu_pool(), leased for the step alone (the
  // caller must hold no lease of this pool).
  Result<Json> PrepareReference(const std::string& problem);
  // Whether the problem can make its inputs, on a leased GPU's referee (Referees::ProbeInputs):
  // Evaluate asks before it builds any candidate.
  Status ProbeInputs(const std::string& problem);
  // Times the eager reference against torch.compile(Model) (BaselineTimes) on the first free GPU.
  // Unavailable when this torch has no torch.compile or compiling fails (the reason says which).
  Result<BaselineTimes> MeasureBaselines(const std::string& problem);
  void Build(const std::string& candidate, EvalResult& result);

  // This executor with other per-evaluation options (trials, timing, tolerances, policies,
  // shapes, seed, timeouts, build-only), sharing its processes: the referees, the GPU pool, the
  // builder, the device runner and the precompiled headers. What names those processes' world
  // stays this executor's, whatever `per_evaluation` says: device, GPUs, Python, cache and work
  // directories, sandbox, CUTLASS tree, parallel builds, precompiled headers. The evaluation
  // server (src/serve) keeps one executor per GPU and evaluates each request with its own options.
  Executor WithOptions(const EvalOptions& per_evaluation) const;

  // What a request to a process that imports `candidate` may carry besides BaseRequest(): its
  // build scope (`build_root`), the inputs tree and its manifest, and the reference's metadata
  // inline (`reference`: trials, output shapes and dtypes, aliasing, operators); never the
  // reference directory or the cache directory. Empty when the candidate file cannot be read.
  Json CandidateRequest(const std::string& candidate, const Json& reference) const;

  // The precompiled headers builds are offered: the first call runs the trusted `pch` step
  // (unconfined) while later callers wait for it; every call after that returns its result.
  // When the step fails, the headers are empty (builds compile without them) and `notes` says
  // why; the step's notes go to the first call that passes `notes`, whichever call ran it.
  PrecompiledHeaders HeadersForBuilds(std::vector<std::string>* notes = nullptr);
  // With precompiled headers on, starts their step now on a thread of its own (a run that will
  // build: optimize calls it before Stage 1, so the first iteration's builds do not wait for it).
  // The first build takes its notes; builds that come before it ends wait for it, as they would.
  void PrepareBuildsAhead();
  // What HeadersForBuilds prepared so far, without running the step (empty before the first
  // build process).
  PrecompiledHeaders PreparedHeaders() const;

  // Where Evaluate and the profiler (profile_runner.h) report each step of each candidate as it
  // starts and ends (building, checking, timing, profiling; core/progress.h); null: nowhere. Set
  // it before the executor is used; copies made after share the sink, which must outlive them.
  void set_progress(ProgressSink* progress) { context_.progress = progress; }
  ProgressSink* progress() const { return context_.progress; }

  // What builds candidates (builder.h): the worker's build step unless replaced. Set before the
  // executor is used; copies made after share it.
  void set_builder(std::shared_ptr<Builder> builder) { builder_ = std::move(builder); }
  // What runs the candidates' device steps (device_runner.h): worker processes on the GPUs of
  // gpu_pool(), judged by this executor's referees, unless replaced; a decorator may wrap the one
  // device_runner() returns. Set before the executor is used; copies made after share it.
  void set_device_runner(std::shared_ptr<DeviceRunner> runner) {
    device_runner_ = std::move(runner);
  }
  const std::shared_ptr<DeviceRunner>& device_runner() const { return device_runner_; }
  // Where the production runner gets candidates' processes (candidate_processes.h): each started
  // fresh unless set. Set before the executor is used; copies made after share it.
  void set_candidate_processes(std::shared_ptr<CandidateProcesses> processes) {
    context_.candidate_processes = std::move(processes);
  }

  const WorkerClient& worker() const { return context_.worker; }
  const EvalOptions& options() const { return context_.options; }
  // The GPUs of options().gpus (one default slot without them). Lease one around every worker
  // step that uses the device and pass the lease's Env() to the step.
  GpuPool& gpu_pool() const { return *context_.gpu_pool; }
  // device, init_seed, atol, rtol: the fields every step gets (no paths).
  const Json& BaseRequest() const { return context_.base_request; }
  // What the parts are handed (eval_context.h).
  const EvalContext& context() const { return context_; }

 private:
  struct BuildHeaders;  // the pch step's result, prepared once, shared by copies

  std::shared_ptr<BuildHeaders> build_headers_;
  EvalContext context_;  // its headers' functions share build_headers_
  std::shared_ptr<Referees> referees_;
  std::shared_ptr<Builder> builder_;
  std::shared_ptr<DeviceRunner> device_runner_;
};

}  // namespace kernelpro::eval
