#include "eval/device_runner.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "eval/check_batches.h"
#include "eval/device_timing.h"
#include "eval/shape_step.h"
#include "eval/speed_of_light.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Leases GPUs to the candidates in their order: the k-th pending candidate leases only after the
// (k-1)-th has, so a GPU that frees goes to the first candidate still waiting, as when each
// device thread leases a GPU before it takes the next pending candidate.
class LeasesInOrder {
 public:
  explicit LeasesInOrder(GpuPool& pool) : pool_(pool) {}

  GpuPool::Lease Acquire(std::size_t turn) {
    std::unique_lock<std::mutex> lock(mutex_);
    turn_came_.wait(lock, [&] { return next_turn_ == turn; });
    GpuPool::Lease lease = pool_.Acquire();  // the later turns wait meanwhile
    ++next_turn_;
    turn_came_.notify_all();
    return lease;
  }

 private:
  GpuPool& pool_;
  std::mutex mutex_;
  std::condition_variable turn_came_;
  std::size_t next_turn_ = 0;
};

// The production run: one evaluation's device steps on the GPUs of the context's pool.
class WorkerDeviceRun : public DeviceRun {
 public:
  using Env = std::map<std::string, std::string>;

  // The device steps of `batch`'s candidates against `problem` (an absolute path). Each
  // candidate's process writes into a work directory of its own, unique per evaluation (several
  // may run concurrently in one process), created empty before its process starts.
  WorkerDeviceRun(const EvalContext& context, std::shared_ptr<Referees> referees,
                  std::string problem, CandidateBatch& batch);

  // With one GPU, starts the first pending candidate's process now, beside the builds and the
  // reference step, and starts CUDA there too: nothing is timed on the device before its turn.
  void StartFirstAhead();
  // Runs the device steps of every candidate still in the running and finishes its progress item;
  // returns when all are done. `reference` is the evaluation's (recomputed there, if it must be).
  void RunAll(SharedReference& reference) override;

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
  // Load in the candidate's process, then the check trials batch by batch (check_batches.h):
  // each batch run there and compared by the referee, its output files deleted before the next.
  // False when the candidate's steps end here (`result` or `changed` says why). `start` is the
  // check's start.
  bool LoadAndCheck(WorkerSession& candidate_process, WorkerSession& referee, const Json& candidate,
                    const Json& reference, const std::string& work,
                    std::chrono::steady_clock::time_point start, EvalResult& result,
                    std::string& changed);
  // One batch's check in the candidate's process: its outputs, or none when the candidate
  // failed (`result` or `changed` says why).
  std::optional<Json> CheckBatch(WorkerSession& candidate_process, const Json& check,
                                 std::chrono::steady_clock::time_point start, EvalResult& result,
                                 std::string& changed);
  // The referee compares a batch's outputs with the reference, adding its rows to the result's;
  // false when the candidate failed.
  bool Compare(WorkerSession& referee, const Json& reference, const Json& checked,
               const std::string& work, std::chrono::steady_clock::time_point start,
               EvalResult& result, std::string& changed);

  const EvalContext& context_;
  const EvalOptions& options_;
  const std::shared_ptr<Referees> referees_;  // the executor's, shared
  const std::string problem_;
  CandidateBatch& batch_;
  const bool single_device_;
  std::string work_prefix_;
  // With one GPU: the process started ahead, and the candidate it is for.
  std::unique_ptr<WorkerSession> ahead_;
  std::optional<std::size_t> ahead_for_;
};

// The production runner: each Begin makes a WorkerDeviceRun with the executor's referees.
class WorkerDeviceRunner : public DeviceRunner {
 public:
  explicit WorkerDeviceRunner(std::shared_ptr<Referees> referees)
      : referees_(std::move(referees)) {}

  std::unique_ptr<DeviceRun> Begin(const EvalContext& context, const std::string& problem,
                                   CandidateBatch& batch) override {
    auto run = std::make_unique<WorkerDeviceRun>(context, referees_, problem, batch);
    run->StartFirstAhead();
    return run;
  }

 private:
  std::shared_ptr<Referees> referees_;
};

WorkerDeviceRun::WorkerDeviceRun(const EvalContext& context, std::shared_ptr<Referees> referees,
                                 std::string problem, CandidateBatch& batch)
    : context_(context),
      options_(context.options),
      referees_(std::move(referees)),
      problem_(std::move(problem)),
      batch_(batch),
      single_device_(context.gpu_pool->size() == 1) {
  // Unique per evaluation too: evaluations may run concurrently in one process.
  static std::atomic<unsigned> evaluations{0};
  // Under work_dir/candidates/, apart from the steps' request folders (work_dir/requests): a
  // process that may write to every candidate folder (the server's blank workers) reaches none.
  work_prefix_ = AbsolutePath(options_.work_dir) + "/candidates/" + std::to_string(::getpid()) +
                 "-" + std::to_string(evaluations++) + "-";
}

std::string WorkerDeviceRun::WorkDir(std::size_t i) const {
  std::string work = work_prefix_ + std::to_string(i) + "-" +
                     fs::path(batch_.results[i].candidate).stem().string();
  std::error_code ec;
  if (!fs::exists(work, ec)) fs::create_directories(work, ec);
  return work;
}

void WorkerDeviceRun::StartFirstAhead() {
  // A pool's processes are started already; one is taken once the candidate's build is done.
  if (!single_device_ || context_.candidate_processes) return;
  const std::vector<std::size_t> pending = batch_.Pending();
  if (pending.empty()) return;
  const std::size_t i = pending.front();
  auto started = StartCandidate(batch_.results[i].candidate, WorkDir(i),
                                GpuPool::EnvFor(context_.gpu_pool->only_gpu()),
                                /*prepare_device=*/true);
  if (started.ok()) {
    ahead_ = std::move(*started);
    ahead_for_ = i;
  }
}

void WorkerDeviceRun::RunAll(SharedReference& reference) {
  const std::vector<std::size_t> pending = batch_.Pending();
  LeasesInOrder leases(*context_.gpu_pool);
  ParallelFor(pending.size(), context_.gpu_pool->size(), [&](std::size_t k) {
    GpuPool::Lease lease = leases.Acquire(k);
    RunCandidate(pending, k, lease, reference);
  });
}

void WorkerDeviceRun::RunCandidate(const std::vector<std::size_t>& pending, std::size_t k,
                                   const GpuPool::Lease& lease, SharedReference& reference) {
  const std::size_t i = pending[k];
  EvalResult& result = batch_.results[i];
  result.gpu = lease.gpu();
  std::unique_ptr<WorkerSession> session;
  // With one GPU there is one device thread: the next pending candidate is the next one it takes.
  if (single_device_) {
    session = TakeAhead(i);
    if (k + 1 < pending.size() && !context_.candidate_processes) {
      const std::size_t j = pending[k + 1];
      auto started = StartCandidate(batch_.results[j].candidate, WorkDir(j), lease.Env());
      if (started.ok()) {
        ahead_ = std::move(*started);
        ahead_for_ = j;
      }
    }
  }
  try {
    CheckAndTime(reference, WorkDir(i), lease.Env(), result, std::move(session), batch_.items[i]);
  } catch (const std::exception& e) {  // a malformed worker result; never kill the thread
    result.status = EvalStatus::kRuntimeError;
    result.message = std::string("internal error during the device steps: ") + e.what();
  }
  if (context_.progress) context_.progress->ItemFinished(batch_.items[i]);
  std::error_code ec;
  fs::remove_all(WorkDir(i), ec);  // outputs can be large; the verdict and errors are kept
}

std::unique_ptr<WorkerSession> WorkerDeviceRun::TakeAhead(std::size_t i) {
  std::unique_ptr<WorkerSession> session;
  if (ahead_for_ == i) session = std::move(ahead_);
  ahead_.reset();
  ahead_for_.reset();
  return session;
}

Result<std::unique_ptr<WorkerSession>> WorkerDeviceRun::StartCandidate(const std::string& candidate,
                                                                       const std::string& work,
                                                                       const Env& env,
                                                                       bool prepare_device) const {
  Json mounts = CandidateRequest(context_, candidate, Json());
  if (mounts.is_null()) return Status::NotFound("cannot read the candidate file " + candidate);
  // The whole inputs tree (inputs are no secret; expected outputs live elsewhere), so that the
  // process can start before the reference step has named this problem's key.
  const std::string inputs = AbsolutePath(options_.cache_dir) + "/inputs";
  std::error_code ec;
  fs::create_directories(inputs, ec);
  // The build scope too: a process started before its build must see what the build writes
  // (a bind mount shows later writes; a path that does not exist yet is not mounted at all).
  fs::create_directories(JsonGet<std::string>(mounts, "build_root", ""), ec);
  mounts["inputs_dir"] = inputs;
  // Read-only, for a load that rebuilds; made now so that the mount exists when a process starts
  // before the first pch step has run (its load is offered the headers prepared by then).
  const std::string pch = AbsolutePath(options_.cache_dir) + "/pch";
  fs::create_directories(pch, ec);
  mounts["pch_dir"] = pch;
  mounts["out_dir"] = work;
  mounts["problem"] = problem_;
  mounts["prepare"] = {{"device", options_.device}, {"start_device", prepare_device}};
  const ProcessLimits limits = CandidateProcessLimits(options_);
  if (context_.candidate_processes) {
    return context_.candidate_processes->Start(context_.worker, mounts, limits, env);
  }
  return WorkerSession::Start(context_.worker, "candidate", mounts, limits, env,
                              Confinement::kSandbox);
}

void WorkerDeviceRun::CheckAndTime(SharedReference& shared, const std::string& work, const Env& env,
                                   EvalResult& result, std::unique_ptr<WorkerSession> session,
                                   const ProgressStep& item) {
  const EvalResult before = result;
  Json reference = shared.Get();
  for (int attempt = 0;; ++attempt) {
    std::string changed = CheckAndTimeOnce(reference, work, env, result, std::move(session), item);
    if (changed.empty()) return;
    if (attempt > 0) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "the recomputed reference changed on disk again: " + changed +
                       ". Something keeps writing into " + AbsolutePath(options_.cache_dir) +
                       " (without a sandbox, a candidate's process can)";
      return;
    }
    // Something wrote into the cache since the reference step (a candidate of this evaluation,
    // without a sandbox, or another kernelpro): recompute it, unless another device thread
    // already has, and check this candidate again from the start.
    Result<Json> fresh = shared.Refresh(reference, [&] {
      return referees_->RunReference(context_, problem_, env, /*rebuild=*/true);
    });
    result = before;
    if (!fresh.ok()) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "the cached reference changed on disk (" + changed +
                       ") and could not be recomputed: " + fresh.status().message();
      return;
    }
    reference = *fresh;
    MergeFindings(result.findings, {{"reference_changed", "warn",
                                     "the cached reference had changed on disk (" + changed +
                                         "); it was recomputed and this candidate checked again"}});
  }
}

std::string WorkerDeviceRun::CheckAndTimeOnce(const Json& reference, const std::string& work,
                                              const Env& env, EvalResult& result,
                                              std::unique_ptr<WorkerSession> session,
                                              const ProgressStep& item) {
  std::string changed;  // set by a step that found the reference's files changed on disk
  const auto start = Clock::now();
  // Load, check and compare: "checking" until the outputs are judged.
  CandidateStep checking(context_.progress, StepOf(item, "checking"), result);

  result.shapes = ShapeChecks{PlannedShapeChecks(reference).mode, {}};
  Json candidate = CandidateRequest(context_, result.candidate, reference);
  if (candidate.is_null()) {
    result.status = EvalStatus::kRuntimeError;
    result.message = "cannot read the candidate file " + result.candidate;
    return "";
  }
  // A stale build record makes the load rebuild: with the headers the builds were offered.
  OfferPrecompiledHeaders(PreparedHeaders(context_), candidate);
  auto referee = referees_->For(context_, env);
  if (!referee.ok()) {
    result.status = EvalStatus::kRuntimeError;
    result.message = "cannot start the referee: " + referee.status().message();
    return "";
  }
  if (!LoadReferenceHere(reference, env, result, changed)) return changed;
  if (!session || !session->alive()) {
    auto started = StartCandidate(result.candidate, work, env);
    if (!started.ok()) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "could not start the candidate's process: " + started.status().message();
      return "";
    }
    session = std::move(*started);
  }
  WorkerSession& cand = *session;
  if (!LoadAndCheck(cand, **referee, candidate, reference, work, start, result, changed)) {
    return changed;
  }
  // Shapes the benchmark never showed: before timing when they decide the verdict; else after
  // it, so that a variant that crashes the candidate's process cannot cost its timing.
  const bool shapes_decide = options_.require_shape_generality;
  if (shapes_decide) {
    CheckShapes(context_, problem_, **referee, cand, candidate, reference, work, result, changed);
    if (!changed.empty()) return changed;
    if (!result.shapes.AllCorrect()) {
      result.status = EvalStatus::kIncorrect;
      result.message = ShapeFailureText(result.shapes);
      return "";
    }
  }

  checking.End();
  CandidateStep timing(context_.progress, StepOf(item, "timing"), result);
  const auto timing_start = Clock::now();
  bool timed = TimeAgainstReference(context_, problem_, reference, **referee, cand, candidate, work,
                                    result, changed);
  result.time_seconds = SecondsSince(timing_start);
  if (!timed) return changed;
  if (!shapes_decide) {
    CheckShapes(context_, problem_, **referee, cand, candidate, reference, work, result, changed);
    if (!changed.empty()) return changed;
  }
  cand.Close();
  // A time below what the machine can physically do is not believed (speed_of_light.h).
  if (!ApplySpeedOfLight(**referee, context_.base_request, problem_, options_, result)) return "";
  if (options_.compile_baseline) TimeCompiledBaseline(context_, problem_, **referee, result);
  result.status = EvalStatus::kCorrect;
  result.message = "";
  return "";
}

bool WorkerDeviceRun::LoadReferenceHere(const Json& reference, const Env& env, EvalResult& result,
                                        std::string& changed) {
  if (referees_->HasLoaded(env, problem_, reference)) return true;
  auto prepared = referees_->RunReference(context_, problem_, env, /*rebuild=*/false);
  if (!prepared.ok()) {
    result.status = EvalStatus::kRuntimeError;
    result.message = "cannot load the reference on this GPU: " + prepared.status().message();
    return false;
  }
  if (ManifestDigest(*prepared) != ManifestDigest(reference)) {
    changed = "the reference loaded on this GPU differs from the evaluation's";
    return false;
  }
  return true;
}

bool WorkerDeviceRun::LoadAndCheck(WorkerSession& candidate_process, WorkerSession& referee,
                                   const Json& candidate, const Json& reference,
                                   const std::string& work, Clock::time_point start,
                                   EvalResult& result, std::string& changed) {
  // Load (import, a cached build's .so, construct) and check, in the candidate's process.
  // The build timeout: a build record can be stale (a new torch), and then the load rebuilds.
  auto load_start = Clock::now();
  const bool loaded_ok =
      AskSession(candidate_process, "load", candidate, options_.build_timeout_s, result, &changed)
          .has_value();
  result.load_seconds = SecondsSince(load_start);
  if (!loaded_ok) {
    result.check_seconds = SecondsSince(start) - result.load_seconds;
    return false;
  }
  Json check = candidate;
  check["out_dir"] = work + "/check";
  check["torch_ops_policy"] = options_.torch_ops_policy;
  check["allowed_ops"] = options_.allowed_ops;
  const Json trials = JsonGet<Json>(reference, "trials", Json::object());
  std::vector<std::string> names;
  for (const char* kind : {"check", "extra"}) {
    for (const Json& n : JsonGet<Json>(trials, kind, Json::array())) {
      names.push_back(n.get<std::string>());
    }
  }
  const auto batches = CheckBatches(reference, names, options_.check_batch_bytes);
  result.correctness = Json::array();
  result.precision_warning.clear();
  for (std::size_t b = 0; b < batches.size(); ++b) {
    check["trials"] = batches[b];
    check["refill"] = b + 1 == batches.size();
    auto checked = CheckBatch(candidate_process, check, start, result, changed);
    if (!checked) return false;
    if (!Compare(referee, reference, *checked, work, start, result, changed)) return false;
    if (batches.size() > 1) {
      std::error_code ec;
      for (const Json& pair : JsonGet<Json>(*checked, "outputs", Json::array())) {
        fs::remove(work + "/check/" + pair[0].get<std::string>() + ".kpt", ec);
      }
    }
  }
  return true;
}

std::optional<Json> WorkerDeviceRun::CheckBatch(WorkerSession& candidate_process, const Json& check,
                                                Clock::time_point start, EvalResult& result,
                                                std::string& changed) {
  auto checked =
      AskSession(candidate_process, "check", check, options_.step_timeout_s, result, &changed);
  result.check_seconds = SecondsSince(start) - result.load_seconds;
  if (!checked) return std::nullopt;
  if (std::string fail = MergeFindings(result.findings, FindingsFrom(*checked)); !fail.empty()) {
    result.status = EvalStatus::kIncorrect;
    result.message = fail;
    return std::nullopt;
  }
  return checked;
}

bool WorkerDeviceRun::Compare(WorkerSession& referee, const Json& reference, const Json& checked,
                              const std::string& work, Clock::time_point start, EvalResult& result,
                              std::string& changed) {
  // The referee compares: it alone is told where the expected outputs are, with the manifest
  // they must match from this process's copy of the reference step's result.
  Json compare = CompareRequest(context_, problem_, reference, work);
  Json check_pairs = Json::array();
  for (const Json& pair : JsonGet<Json>(checked, "outputs", Json::array())) {
    check_pairs.push_back({"check/" + pair[0].get<std::string>(), pair[1]});
  }
  compare["pairs"] = check_pairs;
  auto compared =
      AskSession(referee, "compare", compare, options_.step_timeout_s, result, &changed);
  result.check_seconds = SecondsSince(start) - result.load_seconds;
  if (!compared) {
    if (changed.empty()) result.message = "the comparison failed: " + result.message;
    return false;
  }
  for (const Json& row : JsonGet<Json>(*compared, "trials", Json::array())) {
    result.correctness.push_back(row);
  }
  if (result.precision_warning.empty()) {
    result.precision_warning = JsonGet<std::string>(*compared, "precision_warning", "");
  }
  if (!JsonGet<bool>(*compared, "passed", false)) {
    result.status = EvalStatus::kIncorrect;
    result.message =
        JsonGet<std::string>(*compared, "message", "outputs differ from the reference");
    return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<DeviceRunner> MakeWorkerDeviceRunner(std::shared_ptr<Referees> referees) {
  return std::make_shared<WorkerDeviceRunner>(std::move(referees));
}

}  // namespace kernelpro::eval
