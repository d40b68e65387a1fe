// The executor: evaluates candidates against a problem, end to end, the way kernelpro trusts.
//
//   scan (static checks) ─► reference (in the referee, cached per problem) ─► build (parallel,
//   cached) ─► one candidate process: load, check ─► the referee compares ─► timing in
//   interleaved rounds (the referee times the reference, the candidate's process the candidate,
//   block after block on one GPU) ─► the referee verifies a sample of the timed calls ─► speedup
//   with a round-bootstrap interval
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

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/progress.h"
#include "core/status.h"
#include "eval/gpu_pool.h"
#include "eval/precompiled_headers.h"
#include "eval/verdict.h"
#include "eval/worker_client.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

struct EvalOptions {
  std::string device = "cuda";  // "cuda" or "cpu" (C++ CPU extensions)
  int correctness_trials = 5;   // K: fresh inputs from different seeds
  int extra_trials = 2;         // signed, mixed-scale variants of the problem's inputs
  int fp64_trials = 2;          // check trials also compared against an fp64 reference
  int timing_inputs = 3;        // input sets the timed calls rotate through (each call rescaled)
  int timing_trials = 100;      // timed calls per side, spread over the rounds
  int timing_rounds = 10;       // interleaved rounds: a block of each side, order A B B A A B ...
  double time_budget_s = 10;    // per side: no new round past this (after >= 2 rounds)
  // Outputs of sampled timed calls the referee checks: at most this many bytes in all.
  long long verify_bytes = 512ll << 20;
  double atol = 1e-2;
  double rtol = 1e-3;
  double vacuous_rel_tol = 1e-2;  // relative L2 error bound on problems an all-zero output passes
  std::string precision_policy = "fail";  // fp32 problems vs fp64 reference: fail | warn | off
  double precision_bound = 1e-5;  // relative error floor of that check (TF32 lands near 1e-4)
  double precision_factor = 16;   // ... or this many times the fp32 reference's own error
  std::string torch_ops_policy =
      "forbid";                          // candidate calling the reference's ops: forbid|warn|allow
  std::vector<std::string> allowed_ops;  // ops exempt from that policy (e.g. "matmul")
  bool static_checks =
      true;  // false: skip the scan's 'fail' findings (tests of the runtime guards)
  bool compile_baseline = false;  // also time torch.compile(Model) (torch >= 2)
  // Precompile torch's headers once per toolchain (CACHE/pch, trusted step) for later C++
  // builds: a minute and ~0.6 GB per flag set the first time, ~40 % off each C++ build after.
  // Pays off over many builds: on in optimize, off in a one-off eval.
  bool precompiled_headers = false;
  int jobs = 2;                // parallel builds
  std::uint64_t seed = 1;      // base seed of the trials' inputs
  int init_seed = 42;          // seed before constructing Model and ModelNew (same weights)
  long long flush_bytes = -1;  // L2 flush buffer per timed call; -1: twice the device's L2
  std::string cache_dir = ".kernelpro/cache";  // builds, inputs and references, shared across runs
  std::string work_dir = ".kernelpro/work";    // per-evaluation outputs
  int step_timeout_s = 300;                    // check, time, compare, run
  int build_timeout_s = 1200;
  int reference_timeout_s = 3600;
  bool build_only = false;  // scan and build; no reference, no device steps
  // GPUs the device steps run on, as device ordinals ("0", "1"), each at most once; empty: the
  // process's default device. Several: one candidate per GPU at a time (see above).
  std::vector<std::string> gpus;
  // Candidate code runs in the sandbox (eval/sandbox.h); true runs it unconfined, and every result
  // says so. Only --unsafe-no-sandbox sets it.
  bool unsafe_no_sandbox = false;
  std::vector<std::string> pass_env;           // extra environment names for workers (--pass-env)
  std::vector<std::string> sandbox_read_only;  // extra paths candidates may read (a CUTLASS tree)
  // The CUTLASS tree that candidates including CUTLASS/CuTe headers build against: the folder
  // holding cute/ and cutlass/ ("" = none known; such a candidate is then a compile error naming
  // how to give one) and its release ("4.2.0"), which is part of those builds' cache keys. Every
  // request to a process that imports a candidate carries them as `cutlass`, and the sandbox lets
  // that process read the tree (worker_client.h).
  std::string cutlass_include_dir;
  std::string cutlass_version;
};

// The options as a run stores them for `kernelpro resume`, and back; missing keys keep their
// defaults. unsafe_no_sandbox is never stored: running unconfined is chosen anew by each process.
Json ToJson(const EvalOptions& options);
EvalOptions EvalOptionsFromJson(const Json& json);

struct EvalReport {
  std::string problem;
  Json reference;  // the reference step's metadata: trials, vacuity, fp64 error, notes, manifests
  std::vector<EvalResult> results;  // one per candidate, in the order given
};

// The problem's own baselines on one GPU: the eager reference and torch.compile of it, timed in
// interleaved rounds by the referee (one process, the same inputs and L2 flush as every timing),
// so that torch.compile's speedup over eager is a ratio of two timings of one GPU.
struct BaselineTimes {
  TimingSummary eager;
  TimingSummary compiled;
  RatioInterval compile_speedup;  // eager time / torch.compile time, with its round interval
  std::string method;             // how the calls were timed
  std::string gpu;                // the ordinal it ran on ("" = the default device)
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
  // Times the eager reference against torch.compile(Model) (BaselineTimes) on the first free GPU.
  // Unavailable when this torch has no torch.compile or compiling fails (the reason says which).
  Result<BaselineTimes> MeasureBaselines(const std::string& problem);
  void Build(const std::string& candidate, EvalResult& result);

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
  void set_progress(ProgressSink* progress) { progress_ = progress; }
  ProgressSink* progress() const { return progress_; }

  const WorkerClient& worker() const { return worker_; }
  const EvalOptions& options() const { return options_; }
  // The GPUs of options().gpus (one default slot without them). Lease one around every worker
  // step that uses the device and pass the lease's Env() to the step.
  GpuPool& gpu_pool() const { return *gpu_pool_; }
  // device, init_seed, atol, rtol: the fields every step gets (no paths).
  Json BaseRequest() const;

 private:
  struct SharedReference;  // the reference one evaluation's device threads share

  // The reference step with the caller's device environment; `rebuild` recomputes it even when
  // the cache passes its content check.
  Result<Json> RunReference(const std::string& problem,
                            const std::map<std::string, std::string>& env, bool rebuild);
  // Starts the sandboxed process of one candidate, writing into `work`. It imports torch at once
  // but, without `prepare_device`, touches no device until its first request, so it may start
  // ahead, while another candidate is on the GPU. It sees its source, its build scope, the
  // problem (it times the reference too, for the spread between processes), CACHE/inputs,
  // `work`, and CACHE/pch read-only (a stale build record makes its load rebuild, with the
  // headers builds are offered).
  // `prepare_device`: it starts CUDA before its first request too; only for a process started
  // while nothing is timed on its GPU (a context being made disturbs timings).
  Result<std::unique_ptr<WorkerSession>> StartCandidate(
      const std::string& problem, const std::string& candidate, const std::string& work,
      const std::map<std::string, std::string>& env, bool prepare_device = false) const;
  // Check, compare and time one candidate; when a step reports the reference's files changed on
  // disk, recomputes the reference (once) and starts over. `session` is the candidate's process
  // when one was started ahead (consumed), else null.
  // `item` names the candidate in the progress it reports (its `step` is set here).
  void CheckAndTime(const std::string& problem, SharedReference& reference, const std::string& work,
                    const std::map<std::string, std::string>& env, EvalResult& result,
                    std::unique_ptr<WorkerSession> session, const ProgressStep& item);
  // One attempt of CheckAndTime; returns what changed when a step found the reference's files
  // changed on disk, else "".
  std::string CheckAndTimeOnce(const std::string& problem, const Json& reference,
                               const std::string& work,
                               const std::map<std::string, std::string>& env, EvalResult& result,
                               std::unique_ptr<WorkerSession> session, const ProgressStep& item);
  // Sends a request to a session; returns the reply or records the failure in `result` (a dead
  // worker is classified, a worker status mapped). A reply that found the reference's files
  // changed sets `reference_changed` (when given) to its message instead.
  std::optional<Json> Ask(WorkerSession& session, const std::string& step, const Json& request,
                          int timeout_s, EvalResult& result,
                          std::string* reference_changed = nullptr);
  // The referee of the GPU that `env` selects, started when there is none or it died. The caller
  // holds that GPU's lease, so it is the only user.
  Result<WorkerSession*> Referee(const std::map<std::string, std::string>& env);
  // Interleaved timing rounds and the verification of the sampled calls; fills the timing fields
  // of `result`. Returns false (with the failure recorded) when the candidate failed.
  bool TimeInterleaved(const std::string& problem, const Json& reference, WorkerSession& referee,
                       WorkerSession& candidate, const Json& candidate_request,
                       const std::string& work, EvalResult& result, std::string& changed);

  struct Referees;      // one referee session per GPU, shared by copies of this executor
  struct BuildHeaders;  // the pch step's result, prepared once, shared by copies

  WorkerClient worker_;
  EvalOptions options_;
  std::shared_ptr<GpuPool> gpu_pool_;
  std::shared_ptr<Referees> referees_;
  std::shared_ptr<BuildHeaders> build_headers_;
  ProgressSink* progress_ = nullptr;
};

}  // namespace kernelpro::eval
