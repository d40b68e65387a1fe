// The referees: one trusted worker process per GPU that computes (or loads from the cache) the
// problem's reference, compares a candidate's outputs with it, times it, and verifies a sample of
// a candidate's timed calls. A referee never imports a candidate, so nothing a candidate patches
// at import can change a verdict. It is started the first time its GPU needs it (or when the last
// one died), runs unconfined (only the problem's own code; it reads the reference cache that no
// sandboxed process sees) and serves every evaluation of the executor that owns it.
//
// The reference step: the problem's inputs and expected outputs for the check trials, the extra
// and the timing inputs (seeds derived from options.seed), stored in the cache with content
// hashes (its manifest digest names them); a referee remembers which problem's reference it has
// loaded. SharedReference is one evaluation's copy of that result: a step that finds the cached
// files changed recomputes it, once for all of the evaluation's device threads.
//
// A referee is started with what the evaluation's context (eval_context.h) says: its worker, its
// options, the request fields every step gets.
//
// Threading: Referees is thread-safe and shared by copies of an executor; the session it hands
// out for a GPU must only be used by the holder of that GPU's lease (gpu_pool.h), so it has one
// user at a time. SharedReference is thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/eval_context.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

class Referees {
 public:
  using Env = std::map<std::string, std::string>;

  // The referee of the GPU that `env` selects (a lease's Env()), started when there is none or it
  // died. The caller holds that GPU's lease, so it is the only user.
  Result<WorkerSession*> For(const EvalContext& context, const Env& env);
  // The reference step of `problem` on that referee: computed, or loaded from the cache when it
  // passes its content check (`rebuild`: computed even then). Returns the step's metadata.
  Result<Json> RunReference(const EvalContext& context, const std::string& problem, const Env& env,
                            bool rebuild);
  // Whether `problem` can make its inputs (get_init_inputs() and one get_inputs()), asked of that
  // referee before any candidate is built; nothing runs when its reference is cached already.
  // InvalidArgument ("problem error: get_inputs() failed: ...") when it cannot.
  Status ProbeInputs(const EvalContext& context, const std::string& problem, const Env& env);
  // Whether that GPU's referee has loaded `reference` (the same manifest digest) for `problem`.
  bool HasLoaded(const Env& env, const std::string& problem, const Json& reference);

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<WorkerSession>> by_gpu_;  // by CUDA_VISIBLE_DEVICES
  // What each referee has loaded: GPU -> problem -> the reference's manifest digest.
  std::map<std::string, std::map<std::string, std::string>> prepared_;
};

// The digest of the expected outputs' manifest a reference step's result names ("" when none):
// two results with the same digest name the same stored outputs.
std::string ManifestDigest(const Json& reference);

// What the referee's compare step is asked, short of the pairs to compare: where the expected
// outputs are (only the referee is told), the fields of the reference step's result the
// comparison needs, what recomputing an unstored output needs, and the correctness criterion;
// the candidate's outputs are under `actual_dir`.
Json CompareRequest(const EvalContext& context, const std::string& problem, const Json& reference,
                    const std::string& actual_dir);

// One evaluation's reference, shared by its device threads. A thread whose step found the cached
// files changed replaces it with a recomputed one; threads that saw the same stale one then take
// the replacement instead of recomputing again.
class SharedReference {
 public:
  Json Get();
  void Set(Json meta);
  // After a step found the files of `stale` changed on disk: the reference another thread has
  // recomputed since, else `recompute()`'s result (which replaces it when it succeeds). Other
  // threads asking meanwhile wait for it.
  Result<Json> Refresh(const Json& stale, const std::function<Result<Json>()>& recompute);

 private:
  std::mutex mutex_;
  Json meta_;
};

}  // namespace kernelpro::eval
