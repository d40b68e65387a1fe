#include "eval/executor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/hash.h"

namespace kernelpro::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string Absolute(const std::string& path) {
  return fs::absolute(path).lexically_normal().string();
}

ProcessLimits LimitsFor(int timeout_s) {
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(timeout_s);
  // CPU time may exceed wall time (compiler threads, torch's intra-op pool), but not without bound.
  limits.cpu_seconds = timeout_s * 8;
  limits.max_file_bytes = 64ull << 30;
  limits.max_open_files = 4096;
  return limits;
}

std::vector<Finding> FindingsFrom(const Json& result) {
  std::vector<Finding> findings;
  for (const Json& f : JsonGet<Json>(result, "findings", Json::array())) {
    findings.push_back({JsonGet<std::string>(f, "rule", ""),
                        JsonGet<std::string>(f, "severity", "warn"),
                        JsonGet<std::string>(f, "message", "")});
  }
  return findings;
}

// Appends findings not already present. Returns the messages of the new 'fail' findings joined
// with "; " (empty when there are none): that is what a user reads as the reason.
std::string MergeFindings(std::vector<Finding>& into, const std::vector<Finding>& from) {
  std::string failures;
  for (const Finding& f : from) {
    bool seen = std::any_of(into.begin(), into.end(), [&](const Finding& g) {
      return g.rule == f.rule && g.message == f.message;
    });
    if (seen) continue;
    into.push_back(f);
    if (f.severity == "fail") failures += (failures.empty() ? "" : "; ") + f.message;
  }
  return failures;
}

std::vector<int> Seeds(std::uint64_t base, int offset, int count) {
  std::vector<int> seeds;
  for (int i = 0; i < count; ++i) seeds.push_back(static_cast<int>(base + offset + i));
  return seeds;
}

// A worker that ended without a usable result: its result file could not be read (say so: the
// process itself was fine), or it died (ClassifyProcessFailure).
std::pair<EvalStatus, std::string> DescribeMissingResult(const std::string& step,
                                                         const WorkerOutcome& outcome) {
  if (!outcome.result_error.empty()) {
    return {EvalStatus::kRuntimeError,
            "the worker's result could not be read (" + step + " step): " + outcome.result_error};
  }
  return ClassifyProcessFailure(step, outcome.process);
}

// The fields of the reference step's result that the named steps need, inline in their requests.
Json Pick(const Json& meta, std::initializer_list<const char*> keys) {
  Json picked = Json::object();
  for (const char* key : keys) picked[key] = JsonGet<Json>(meta, key, nullptr);
  return picked;
}

// A candidate's step as its progress line names it: "cand 2/3 cuda_swish.py: building".
ProgressStep StepOf(const ProgressStep& item, const char* step) {
  ProgressStep s = item;
  s.step = step;
  return s;
}

// How a step that left `result` as it is ended, for its progress line: "" (done) or the verdict.
std::string StepOutcome(const EvalResult& result) {
  return result.status == EvalStatus::kCorrect ? "" : EvalStatusName(result.status);
}

// One step of a candidate, reported from construction until End() or destruction (every return
// path ends it), its outcome the candidate's verdict at that moment.
class CandidateStep {
 public:
  CandidateStep(ProgressSink* sink, ProgressStep step, const EvalResult& result)
      : sink_(sink), step_(std::move(step)), result_(result) {
    if (sink_) sink_->StepStarted(step_);
  }
  ~CandidateStep() { End(); }
  CandidateStep(const CandidateStep&) = delete;
  CandidateStep& operator=(const CandidateStep&) = delete;
  void End() { EndAs(StepOutcome(result_)); }
  void EndAs(const std::string& outcome) {
    if (sink_) sink_->StepFinished(step_, outcome);
    sink_ = nullptr;
  }

 private:
  ProgressSink* sink_;
  ProgressStep step_;
  const EvalResult& result_;
};

}  // namespace

// One evaluation's reference, shared by its device threads. A thread whose step found the cached
// files changed replaces it with a recomputed one; threads that saw the same stale one then take
// the replacement instead of recomputing again.
struct Executor::SharedReference {
  std::mutex mutex;
  Json meta;

  Json Get() {
    std::lock_guard<std::mutex> lock(mutex);
    return meta;
  }
};

struct Executor::Referees {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<WorkerSession>> by_gpu;  // by CUDA_VISIBLE_DEVICES
  // What each referee has loaded: GPU -> problem -> the reference's manifest digest.
  std::map<std::string, std::map<std::string, std::string>> prepared;
};

// The precompiled headers of this executor's builds. The executor is reused across an optimize
// run's iterations, so the pch step runs once, for the first build that needs a build process.
struct Executor::BuildHeaders {
  std::mutex mutex;
  bool prepared = false;
  bool notes_given = false;  // the notes go to the first build that asks
  std::vector<std::string> notes;
  PrecompiledHeaders headers;  // empty `dir` when the step failed: nothing to offer
  std::thread ahead;           // PrepareBuildsAhead's thread

  ~BuildHeaders() {
    if (!ahead.joinable()) return;
    // The thread holds a copy of the executor: the last reference may be its own.
    if (ahead.get_id() == std::this_thread::get_id()) {
      ahead.detach();
    } else {
      ahead.join();
    }
  }
};

namespace {

std::string GpuKey(const std::map<std::string, std::string>& env) {
  auto gpu = env.find("CUDA_VISIBLE_DEVICES");
  return gpu == env.end() ? "" : gpu->second;
}

}  // namespace

Executor::Executor(WorkerClient worker, EvalOptions options)
    : worker_(std::move(worker)),
      options_(std::move(options)),
      gpu_pool_(std::make_shared<GpuPool>(options_.gpus)),
      referees_(std::make_shared<Referees>()),
      build_headers_(std::make_shared<BuildHeaders>()) {}

PrecompiledHeaders Executor::HeadersForBuilds(std::vector<std::string>* notes) {
  // Held while the step runs: builds that come meanwhile want its headers too, and a second
  // step would only wait on the first's lock file.
  std::lock_guard<std::mutex> lock(build_headers_->mutex);
  BuildHeaders& h = *build_headers_;
  if (!h.prepared) {
    h.prepared = true;
    // The build step's environment (no GPU lease): the flags a build sees are the ones to match.
    auto prepared = PreparePrecompiledHeaders(worker_, options_.cache_dir, options_.device, {},
                                              options_.build_timeout_s);
    if (prepared.ok()) {
      h.headers = std::move(*prepared);
      h.notes = h.headers.notes;
    } else {
      h.notes = {"no precompiled headers (builds compile torch's headers as text): " +
                 prepared.status().message()};
    }
  }
  if (notes && !h.notes_given) {
    *notes = h.notes;
    h.notes_given = true;
  }
  return h.headers;
}

void Executor::PrepareBuildsAhead() {
  if (!options_.precompiled_headers) return;
  std::lock_guard<std::mutex> lock(build_headers_->mutex);
  if (build_headers_->prepared || build_headers_->ahead.joinable()) return;
  // A copy of this executor (it shares build_headers_), so the thread never outlives what it uses.
  build_headers_->ahead = std::thread([self = *this]() mutable { self.HeadersForBuilds(nullptr); });
}

PrecompiledHeaders Executor::PreparedHeaders() const {
  std::lock_guard<std::mutex> lock(build_headers_->mutex);
  return build_headers_->headers;
}

Result<WorkerSession*> Executor::Referee(const std::map<std::string, std::string>& env) {
  const std::string key = GpuKey(env);
  std::lock_guard<std::mutex> lock(referees_->mutex);
  std::unique_ptr<WorkerSession>& slot = referees_->by_gpu[key];
  if (slot && slot->alive()) return slot.get();
  referees_->prepared.erase(key);  // a new process has nothing loaded
  // Unconfined: it runs only the problem's own code, and reads the reference cache a sandboxed
  // process never sees. No CPU-time limit: it serves every candidate of the run.
  ProcessLimits limits;
  limits.max_file_bytes = 64ull << 30;
  limits.max_open_files = 4096;
  // It starts CUDA at once: it is started before anything is timed on its GPU.
  Json prepare{{"prepare", {{"device", options_.device}, {"start_device", true}}}};
  // torch keeps the kernels it compiles at run time (jiterator, NVRTC) there, so a later run loads
  // them instead of compiling again; no sandboxed process sees this folder.
  std::map<std::string, std::string> referee_env = env;
  const std::string kernels = Absolute(options_.cache_dir) + "/kernels";
  std::error_code ec;
  fs::create_directories(kernels, ec);
  if (!ec) referee_env["PYTORCH_KERNEL_CACHE_PATH"] = kernels;
  auto started =
      WorkerSession::Start(worker_, "referee", prepare, limits, referee_env, Confinement::kNone);
  if (!started.ok()) return started.status();
  slot = std::move(*started);
  return slot.get();
}

Json Executor::BaseRequest() const {
  return Json{{"device", options_.device},
              {"init_seed", options_.init_seed},
              {"atol", options_.atol},
              {"rtol", options_.rtol}};
}

Json Executor::CandidateRequest(const std::string& candidate, const Json& reference) const {
  std::ifstream in(candidate, std::ios::binary);
  if (!in) return Json();
  std::stringstream bytes;
  bytes << in.rdbuf();
  Json request = BaseRequest();
  request["candidate"] = candidate;
  // One scope per source: a candidate can only poison builds that its identical source loads.
  request["build_root"] =
      Absolute(options_.cache_dir) + "/builds/" + Sha256Hex(bytes.str()).substr(0, 24);
  // Its builds of CUTLASS/CuTe code take their flags and include folders from this tree.
  if (!options_.cutlass_include_dir.empty()) {
    request["cutlass"] = {{"include_dir", options_.cutlass_include_dir},
                          {"version", options_.cutlass_version}};
  }
  if (!reference.is_null()) {
    request["inputs_dir"] = JsonGet<std::string>(reference, "inputs_dir", "");
    request["inputs_manifest"] = JsonGet<Json>(reference, "inputs_manifest", Json::object());
    request["inputs_recipe"] = JsonGet<Json>(reference, "inputs_recipe", Json::object());
    request["reference"] =
        Pick(reference, {"trials", "outputs", "output_aliases_input", "reference_ops"});
  }
  return request;
}

Result<Json> Executor::PrepareReference(const std::string& problem) {
  GpuPool::Lease lease = gpu_pool_->Acquire();
  return RunReference(problem, lease.Env(), /*rebuild=*/false);
}

Result<BaselineTimes> Executor::MeasureBaselines(const std::string& problem) {
  GpuPool::Lease lease = gpu_pool_->Acquire();
  const std::map<std::string, std::string> env = lease.Env();
  // Loads the reference (its inputs) into this GPU's referee, from the cache when it is there.
  auto reference = RunReference(problem, env, /*rebuild=*/false);
  if (!reference.ok()) return reference.status();
  auto referee = Referee(env);
  if (!referee.ok()) return referee.status();
  const int trials = std::max(1, options_.timing_trials);
  const int rounds =
      std::clamp(std::min(options_.timing_rounds, trials / 5), std::min(2, trials), trials);
  const int calls = (trials + rounds - 1) / rounds;
  BaselineTimes out;
  out.gpu = lease.gpu();
  std::vector<std::vector<double>> eager_blocks, compiled_blocks;
  for (int round = 0; round < rounds; ++round) {
    for (int slot = 0; slot < 2; ++slot) {
      // A B B A A B ..., as candidates are timed against the reference.
      const bool compiled_turn = (round % 2 == 0) == (slot == 1);
      Json request = BaseRequest();
      request["problem"] = problem;
      request["flush_bytes"] = options_.flush_bytes;
      request["compiled"] = compiled_turn;
      request["calls"] = calls;
      request["warmup_s"] = round == 0 ? (slot == 0 ? 0.5 : 0.1) : 0.0;
      request["warmup_calls"] = round == 0 ? 3 : (calls >= 4 ? 1 : 0);
      // The first compiled call compiles: it gets the build timeout.
      const int timeout = round == 0 ? options_.build_timeout_s : options_.step_timeout_s;
      SessionReply reply = (*referee)->Call("time", request, std::chrono::seconds(timeout));
      if (!reply.result) {
        std::string why = reply.error;
        if (reply.ended) why += (why.empty() ? "" : ": ") + reply.ended->Describe();
        return Status::Internal("timing the baselines failed: " + why);
      }
      if (JsonGet<std::string>(*reply.result, "status", "ok") != "ok") {
        return Status::Unavailable("torch.compile baseline: " +
                                   JsonGet<std::string>(*reply.result, "message", "unavailable"));
      }
      std::vector<double> times = JsonGet<std::vector<double>>(*reply.result, "times_ms", {});
      TimingSummary& into = compiled_turn ? out.compiled : out.eager;
      into.samples.insert(into.samples.end(), times.begin(), times.end());
      into.block_medians.push_back(Median(times));
      (compiled_turn ? compiled_blocks : eager_blocks).push_back(times);
      out.method = JsonGet<std::string>(*reply.result, "method", out.method);
    }
  }
  out.eager.summary = Summarize(out.eager.samples);
  out.compiled.summary = Summarize(out.compiled.samples);
  out.compile_speedup = BootstrapBlockMedianRatio(eager_blocks, compiled_blocks);
  return out;
}

Result<Json> Executor::RunReference(const std::string& problem,
                                    const std::map<std::string, std::string>& env, bool rebuild) {
  Json request = BaseRequest();
  request["problem"] = problem;
  request["cache_dir"] = Absolute(options_.cache_dir);
  request["rebuild"] = rebuild;
  request["check_seeds"] = Seeds(options_.seed, 0, options_.correctness_trials);
  request["extra_seeds"] = Seeds(options_.seed, 1000, options_.extra_trials);
  request["timing_seeds"] = Seeds(options_.seed, 2000, std::max(1, options_.timing_inputs));
  request["fp64_trials"] = options_.fp64_trials;
  auto referee = Referee(env);
  if (!referee.ok()) return referee.status();
  SessionReply reply =
      (*referee)->Call("reference", request, std::chrono::seconds(options_.reference_timeout_s));
  if (!reply.result) {
    std::string why = ClassifyProcessFailure("the reference step", *reply.ended).second;
    if (!reply.error.empty()) why = reply.error + ": " + why;
    return Status::Internal("the reference could not be computed: " + why);
  }
  const Json& meta = *reply.result;
  std::string status = JsonGet<std::string>(meta, "status", "");
  if (status != "ok") {
    std::string message = JsonGet<std::string>(meta, "message", "unknown failure");
    if (status == "device_error") return Status::Unavailable(message);
    return Status::InvalidArgument("problem error: " + message);
  }
  {
    std::lock_guard<std::mutex> lock(referees_->mutex);
    referees_->prepared[GpuKey(env)][problem] = JsonGet<std::string>(meta, "manifest_digest", "");
  }
  return meta;
}

std::optional<Json> Executor::Ask(WorkerSession& session, const std::string& step,
                                  const Json& request, int timeout_s, EvalResult& result,
                                  std::string* reference_changed) {
  SessionReply reply = session.Call(step, request, std::chrono::seconds(timeout_s));
  if (!reply.result) {
    const ProcessResult& process = *reply.ended;
    if (!process.started) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "could not start the " + session.role() + " process: " + process.start_error;
    } else if (process.cancelled && reply.error.starts_with("timed out")) {
      result.status = EvalStatus::kTimeout;
      result.message = reply.error + " (an endless loop or a hung kernel?)";
    } else {
      std::tie(result.status, result.message) =
          ClassifyProcessFailure("the " + step + " step", process);
      if (process.cancelled && !reply.error.empty()) result.message = reply.error;
    }
    if (session.role() == "referee" && result.status != EvalStatus::kTimeout) {
      result.message = "the referee failed: " + result.message;
    }
    return std::nullopt;
  }
  Json& json = *reply.result;
  std::string status = JsonGet<std::string>(json, "status", "ok");
  if (status == "reference_changed" && reference_changed) {
    *reference_changed = JsonGet<std::string>(json, "message", "the reference's files changed");
    result.status = EvalStatus::kRuntimeError;
    result.message = *reference_changed;
    return std::nullopt;
  }
  if (status != "ok" && status != "unavailable") {
    result.status = StatusFromWorker(status);
    result.message = JsonGet<std::string>(json, "message", status);
    if (status == "worker_error")
      result.message = "worker error during " + step + ": " + result.message;
    return std::nullopt;
  }
  return std::move(json);
}

void Executor::Build(const std::string& candidate, EvalResult& result) {
  auto start = Clock::now();
  Json request = CandidateRequest(candidate, Json());
  if (request.is_null()) {
    result.status = EvalStatus::kCompileError;
    result.message = "cannot read the candidate file " + candidate;
    return;
  }
  // A source built before needs no build process: the record beside its scope (where no
  // sandboxed process can write) names its shared objects. The candidate's process loads them
  // through the same content-addressed cache, and rebuilds there if they went stale.
  const std::string scope = JsonGet<std::string>(request, "build_root", "");
  const std::string record_path = scope + ".built.json";
  // Another CUTLASS release may change what a CUTLASS candidate builds (its build keys include
  // the release): such a record sends the candidate through the build step again, which finds
  // every other candidate's builds cached.
  if (auto record = ReadJsonFile(record_path);
      record.ok() && JsonGet<std::string>(*record, "python", "") == worker_.python() &&
      JsonGet<std::string>(*record, "cutlass", "") == options_.cutlass_version) {
    std::vector<std::string> objects =
        JsonGet<std::vector<std::string>>(*record, "shared_objects", {});
    bool present = !objects.empty();
    for (const std::string& so : objects) present = present && fs::is_regular_file(so);
    if (present) {
      std::error_code touched;  // last used, for `kernelpro cache prune`
      fs::last_write_time(record_path, fs::file_time_type::clock::now(), touched);
      result.shared_objects = objects;
      result.build_cached = true;
      result.build_seconds = SecondsSince(start);
      result.status = EvalStatus::kCorrect;
      return;
    }
  }
  // Not cached: offer the precompiled headers (made now by the first build that gets here).
  if (options_.precompiled_headers) {
    OfferPrecompiledHeaders(HeadersForBuilds(&result.build_notes), request);
  }
  // A build that runs beside others gets a share of the cores for its own compiler jobs.
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::string max_jobs = std::to_string(std::max(1u, cores / std::max(1, options_.jobs)));
  auto outcome = worker_.Run("build", request, LimitsFor(options_.build_timeout_s),
                             {{"MAX_JOBS", max_jobs}}, {}, 16 * 1024, Confinement::kSandbox);
  result.build_seconds = SecondsSince(start);
  if (!outcome.ok()) {
    result.status = EvalStatus::kRuntimeError;
    result.message = "could not run the build step: " + outcome.status().message();
    return;
  }
  if (!outcome->result) {
    std::tie(result.status, result.message) = DescribeMissingResult("build", *outcome);
    return;
  }
  const Json& json = *outcome->result;
  bool all_cached = true;
  for (const Json& ext : JsonGet<Json>(json, "extensions", Json::array())) {
    if (auto so = JsonGet<std::string>(ext, "so_path", ""); !so.empty())
      result.shared_objects.push_back(so);
    if (!JsonGet<bool>(ext, "cached", false)) all_cached = false;
    if (auto diag = JsonGet<std::string>(ext, "diagnostics", ""); !diag.empty())
      result.diagnostics = diag;
    for (const Json& note : JsonGet<Json>(ext, "build_notes", Json::array())) {
      if (note.is_string()) result.build_notes.push_back(note.get<std::string>());
    }
  }
  result.build_cached = all_cached && !result.shared_objects.empty();
  std::string status = JsonGet<std::string>(json, "status", "ok");
  if (status != "ok") {
    result.status = StatusFromWorker(status);
    result.message = JsonGet<std::string>(json, "message", status);
    return;
  }
  result.status = EvalStatus::kCorrect;  // provisional: built and importable
  if (!result.shared_objects.empty()) {
    // Best effort: without the record the next evaluation runs the (cached) build step again.
    (void)WriteJsonFile(record_path, Json{{"python", worker_.python()},
                                          {"cutlass", options_.cutlass_version},
                                          {"shared_objects", result.shared_objects}});
  }
}

Result<std::unique_ptr<WorkerSession>> Executor::StartCandidate(
    const std::string& problem, const std::string& candidate, const std::string& work,
    const std::map<std::string, std::string>& env, bool prepare_device) const {
  Json mounts = CandidateRequest(candidate, Json());
  if (mounts.is_null()) return Status::NotFound("cannot read the candidate file " + candidate);
  // The whole inputs tree (inputs are no secret; expected outputs live elsewhere), so that the
  // process can start before the reference step has named this problem's key.
  const std::string inputs = Absolute(options_.cache_dir) + "/inputs";
  std::error_code ec;
  fs::create_directories(inputs, ec);
  // The build scope too: a process started before its build must see what the build writes
  // (a bind mount shows later writes; a path that does not exist yet is not mounted at all).
  fs::create_directories(JsonGet<std::string>(mounts, "build_root", ""), ec);
  mounts["inputs_dir"] = inputs;
  // Read-only, for a load that rebuilds; made now so that the mount exists when a process starts
  // before the first pch step has run (its load is offered the headers prepared by then).
  const std::string pch = Absolute(options_.cache_dir) + "/pch";
  fs::create_directories(pch, ec);
  mounts["pch_dir"] = pch;
  mounts["out_dir"] = work;
  mounts["problem"] = problem;
  mounts["prepare"] = {{"device", options_.device}, {"start_device", prepare_device}};
  // The limits of a step as long as a load that rebuilds plus a few steps; no wall-clock limit
  // for the process as a whole: each request has its own.
  ProcessLimits limits = LimitsFor(options_.build_timeout_s + 4 * options_.step_timeout_s);
  limits.wall_timeout = std::chrono::milliseconds(0);
  return WorkerSession::Start(worker_, "candidate", mounts, limits, env, Confinement::kSandbox);
}

void Executor::CheckAndTime(const std::string& problem, SharedReference& shared,
                            const std::string& work, const std::map<std::string, std::string>& env,
                            EvalResult& result, std::unique_ptr<WorkerSession> session,
                            const ProgressStep& item) {
  const EvalResult before = result;
  Json reference = shared.Get();
  for (int attempt = 0;; ++attempt) {
    std::string changed =
        CheckAndTimeOnce(problem, reference, work, env, result, std::move(session), item);
    if (changed.empty()) return;
    if (attempt > 0) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "the recomputed reference changed on disk again: " + changed +
                       ". Something keeps writing into " + Absolute(options_.cache_dir) +
                       " (without a sandbox, a candidate's process can)";
      return;
    }
    // Something wrote into the cache since the reference step (a candidate of this evaluation,
    // without a sandbox, or another kernelpro): recompute it, unless another device thread
    // already has, and check this candidate again from the start.
    Result<Json> fresh = [&]() -> Result<Json> {
      std::lock_guard<std::mutex> lock(shared.mutex);
      if (JsonGet<std::string>(shared.meta, "manifest_digest", "") !=
          JsonGet<std::string>(reference, "manifest_digest", "")) {
        return shared.meta;
      }
      auto rebuilt = RunReference(problem, env, /*rebuild=*/true);
      if (rebuilt.ok()) shared.meta = *rebuilt;
      return rebuilt;
    }();
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

std::string Executor::CheckAndTimeOnce(const std::string& problem, const Json& reference,
                                       const std::string& work,
                                       const std::map<std::string, std::string>& env,
                                       EvalResult& result, std::unique_ptr<WorkerSession> session,
                                       const ProgressStep& item) {
  const Json trials = JsonGet<Json>(reference, "trials", Json::object());
  std::string changed;  // set by a step that found the reference's files changed on disk
  auto start = Clock::now();
  // Load, check and compare: "checking" until the outputs are judged.
  CandidateStep checking(progress_, StepOf(item, "checking"), result);

  Json candidate = CandidateRequest(result.candidate, reference);
  if (candidate.is_null()) {
    result.status = EvalStatus::kRuntimeError;
    result.message = "cannot read the candidate file " + result.candidate;
    return "";
  }
  // A stale build record makes the load rebuild: with the headers the builds were offered.
  OfferPrecompiledHeaders(PreparedHeaders(), candidate);
  auto referee = Referee(env);
  if (!referee.ok()) {
    result.status = EvalStatus::kRuntimeError;
    result.message = "cannot start the referee: " + referee.status().message();
    return "";
  }
  // This GPU's referee may not have loaded this reference yet (it was prepared on another GPU,
  // or the referee was restarted): load it there from the cache.
  bool loaded;
  {
    std::lock_guard<std::mutex> lock(referees_->mutex);
    loaded = referees_->prepared[GpuKey(env)][problem] ==
             JsonGet<std::string>(reference, "manifest_digest", "");
  }
  if (!loaded) {
    auto prepared = RunReference(problem, env, /*rebuild=*/false);
    if (!prepared.ok()) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "cannot load the reference on this GPU: " + prepared.status().message();
      return "";
    }
    if (JsonGet<std::string>(*prepared, "manifest_digest", "") !=
        JsonGet<std::string>(reference, "manifest_digest", "")) {
      return "the reference loaded on this GPU differs from the evaluation's";
    }
  }
  if (!session || !session->alive()) {
    auto started = StartCandidate(problem, result.candidate, work, env);
    if (!started.ok()) {
      result.status = EvalStatus::kRuntimeError;
      result.message = "could not start the candidate's process: " + started.status().message();
      return "";
    }
    session = std::move(*started);
  }
  const int step_timeout = options_.step_timeout_s;
  WorkerSession& cand = *session;

  // Load (import, a cached build's .so, construct) and check, in the candidate's process.
  // The build timeout: a build record can be stale (a new torch), and then the load rebuilds.
  auto load_start = Clock::now();
  const bool loaded_ok =
      Ask(cand, "load", candidate, options_.build_timeout_s, result, &changed).has_value();
  result.load_seconds = SecondsSince(load_start);
  if (!loaded_ok) {
    result.check_seconds = SecondsSince(start) - result.load_seconds;
    return changed;
  }
  Json check = candidate;
  check["out_dir"] = work + "/check";
  check["torch_ops_policy"] = options_.torch_ops_policy;
  check["allowed_ops"] = options_.allowed_ops;
  Json names = Json::array();
  for (const char* kind : {"check", "extra"}) {
    for (const Json& n : JsonGet<Json>(trials, kind, Json::array())) names.push_back(n);
  }
  check["trials"] = names;
  auto checked = Ask(cand, "check", check, step_timeout, result, &changed);
  result.check_seconds = SecondsSince(start) - result.load_seconds;
  if (!checked) return changed;
  if (std::string fail = MergeFindings(result.findings, FindingsFrom(*checked)); !fail.empty()) {
    result.status = EvalStatus::kIncorrect;
    result.message = fail;
    return "";
  }

  // The referee compares: it alone is told where the expected outputs are, with the manifest
  // they must match from this process's copy of the reference step's result.
  Json compare = BaseRequest();
  compare["reference_dir"] = JsonGet<std::string>(reference, "reference_dir", "");
  compare["reference"] = Pick(reference, {"outputs", "vacuous", "fp32", "reference_fp64_error",
                                          "fp64_trials", "reference_manifest"});
  compare["vacuous_rel_tol"] = options_.vacuous_rel_tol;
  compare["precision_policy"] = options_.precision_policy;
  compare["precision_bound"] = options_.precision_bound;
  compare["precision_factor"] = options_.precision_factor;
  compare["actual_dir"] = work;
  Json check_pairs = Json::array();
  for (const Json& pair : JsonGet<Json>(*checked, "outputs", Json::array())) {
    check_pairs.push_back({"check/" + pair[0].get<std::string>(), pair[1]});
  }
  compare["pairs"] = check_pairs;
  auto compared = Ask(**referee, "compare", compare, step_timeout, result, &changed);
  result.check_seconds = SecondsSince(start) - result.load_seconds;
  if (!compared) {
    if (changed.empty()) result.message = "the comparison failed: " + result.message;
    return changed;
  }
  result.correctness = JsonGet<Json>(*compared, "trials", Json::array());
  result.precision_warning = JsonGet<std::string>(*compared, "precision_warning", "");
  if (!JsonGet<bool>(*compared, "passed", false)) {
    result.status = EvalStatus::kIncorrect;
    result.message =
        JsonGet<std::string>(*compared, "message", "outputs differ from the reference");
    return "";
  }

  checking.End();
  CandidateStep timing(progress_, StepOf(item, "timing"), result);
  start = Clock::now();
  bool timed =
      TimeInterleaved(problem, reference, **referee, cand, candidate, work, result, changed);
  result.time_seconds = SecondsSince(start);
  if (!timed) return changed;
  cand.Close();

  if (options_.compile_baseline) {
    Json request = BaseRequest();
    request["problem"] = problem;
    request["compiled"] = true;
    request["spans"] = result.device_records;  // timed as the candidate was
    request["calls"] = options_.timing_trials;
    request["warmup_s"] = 0.5;
    request["warmup_calls"] = 3;
    request["flush_bytes"] = options_.flush_bytes;
    EvalResult scratch;
    auto compiled = Ask(**referee, "time", request, step_timeout, scratch);
    if (!compiled) {
      result.compiled_note = "torch.compile baseline failed: " + scratch.message;
    } else if (JsonGet<std::string>(*compiled, "status", "ok") != "ok") {
      result.compiled_note = JsonGet<std::string>(*compiled, "message", "unavailable");
    } else {
      TimingSummary t;
      t.samples = JsonGet<std::vector<double>>(*compiled, "times_ms", {});
      t.summary = Summarize(t.samples);
      t.block_medians = {t.summary.median};
      result.speedup_vs_compiled = BootstrapMedianRatio(t.samples, result.candidate_time->samples);
      result.compiled_time = std::move(t);
    }
  }
  result.status = EvalStatus::kCorrect;
  result.message = "";
  return "";
}

bool Executor::TimeInterleaved(const std::string& problem, const Json& reference,
                               WorkerSession& referee, WorkerSession& candidate,
                               const Json& candidate_request, const std::string& work,
                               EvalResult& result, std::string& changed) {
  const int trials = std::max(1, options_.timing_trials);
  // At least 5 calls a block (and 2 rounds) where the trials allow: a block's median needs a few.
  const int rounds =
      std::clamp(std::min(options_.timing_rounds, trials / 5), std::min(2, trials), trials);
  const int calls = (trials + rounds - 1) / rounds;
  const int planned = calls * rounds;
  // Each timed call of the candidate is kept for verification with this probability, decided
  // after the call: about a fifth of the calls (at least 8), fewer when the outputs are large.
  double output_bytes = 0;
  for (const Json& out : JsonGet<Json>(reference, "outputs", Json::array())) {
    double n = 1;
    for (const Json& d : JsonGet<Json>(out, "shape", Json::array())) n *= d.get<double>();
    std::string dtype = JsonGet<std::string>(out, "dtype", "");
    double size =
        dtype.find("64") != std::string::npos                                                  ? 8
        : dtype.find("16") != std::string::npos                                                ? 2
        : (dtype.find("int8") != std::string::npos || dtype.find("bool") != std::string::npos) ? 1
                                                                                               : 4;
    output_bytes += n * size;
  }
  double wanted = std::max(8.0, 0.2 * planned);
  if (output_bytes > 0) {
    wanted =
        std::min(wanted, std::max(2.0, static_cast<double>(options_.verify_bytes) / output_bytes));
  }
  const double sample_p = std::min(1.0, wanted / planned);

  Json ref_request = BaseRequest();
  ref_request["problem"] = problem;
  ref_request["flush_bytes"] = options_.flush_bytes;
  Json cand_request = candidate_request;
  cand_request["flush_bytes"] = options_.flush_bytes;
  cand_request["out_dir"] = work + "/timed";
  cand_request["sample_p"] = sample_p;
  cand_request["problem"] = problem;  // the reference is timed there too: the process spread

  TimingSummary ref_time, cand_time;
  std::vector<std::vector<double>> ref_blocks, cand_blocks;
  std::vector<double> reference_in_candidate;  // the reference timed in the candidate's process
  Json samples = Json::array();
  // Both sides are timed the same way: from the device's activity records where both processes
  // can read them; when one cannot, the rounds start over with CUDA events on both sides.
  bool spans = options_.device == "cuda";
  auto started = Clock::now();
  for (int round = 0; round < rounds; ++round) {
    if (round >= 2 && SecondsSince(started) > 2 * options_.time_budget_s) break;
    for (int slot = 0; slot < 2; ++slot) {
      // A B B A A B ...: each side goes first in every other round, so drift favours neither.
      const bool candidate_turn = (round % 2 == 0) == (slot == 1);
      Json request = candidate_turn ? cand_request : ref_request;
      request["calls"] = calls;
      request["spans"] = spans;
      // The first block of the first round starts with a warm-up long enough to leave idle
      // clocks, the other side's first block with a shorter one (the device was busy just now);
      // later blocks with one untimed call (none in blocks of fewer than 4 calls).
      request["warmup_s"] = round == 0 ? (slot == 0 ? 0.5 : 0.1) : 0.0;
      request["warmup_calls"] = round == 0 ? 3 : (calls >= 4 ? 1 : 0);
      EvalResult scratch;
      EvalResult& sink = candidate_turn ? result : scratch;
      auto timed = Ask(candidate_turn ? candidate : referee, "time", request,
                       options_.step_timeout_s, sink, &changed);
      if (!timed) {
        if (!changed.empty()) return false;
        if (!candidate_turn) {
          result.status =
              scratch.status == EvalStatus::kTimeout ? EvalStatus::kRuntimeError : scratch.status;
          result.message = "timing the reference failed: " + scratch.message;
        } else if (result.message.find("while being timed") == std::string::npos) {
          result.message = "while being timed: " + result.message;
        }
        return false;
      }
      if (std::string fail = MergeFindings(result.findings, FindingsFrom(*timed)); !fail.empty()) {
        result.status = EvalStatus::kIncorrect;
        result.message = fail;
        return false;
      }
      // Verification samples stay valid whatever happens to the timing below.
      if (candidate_turn) {
        for (const Json& sample : JsonGet<Json>(*timed, "samples", Json::array())) {
          samples.push_back(sample);
        }
      }
      if (spans && !JsonGet<bool>(*timed, "spans", false)) {
        spans = false;
        ref_time = cand_time = TimingSummary();
        ref_blocks.clear();
        cand_blocks.clear();
        reference_in_candidate.clear();
        result.reference_calls = result.candidate_calls = CallFacts();
        MergeFindings(result.findings,
                      {{"no_device_records", "warn",
                        std::string("the device's activity records could not be read in the ") +
                            (candidate_turn ? "candidate's" : "referee's") + " process (" +
                            JsonGet<std::string>(*timed, "spans_note", "no reason given") +
                            "); both sides were timed with CUDA events around the call, which "
                            "count the host's time to launch it"}});
        round = -1;  // the rounds start over, from the first
        break;
      }
      std::vector<double> times = JsonGet<std::vector<double>>(*timed, "times_ms", {});
      TimingSummary& into = candidate_turn ? cand_time : ref_time;
      into.samples.insert(into.samples.end(), times.begin(), times.end());
      into.block_medians.push_back(Median(times));
      (candidate_turn ? cand_blocks : ref_blocks).push_back(times);
      (candidate_turn ? result.candidate_calls : result.reference_calls).Add(*timed);
      if (candidate_turn) {
        auto here = JsonGet<std::vector<double>>(*timed, "reference_times_ms", {});
        reference_in_candidate.insert(reference_in_candidate.end(), here.begin(), here.end());
        if (auto note = JsonGet<std::string>(*timed, "reference_note", ""); !note.empty()) {
          MergeFindings(result.findings,
                        {{"process_spread", "warn",
                          note + "; the interval is not widened by the spread between processes"}});
        }
        result.timing_method = JsonGet<std::string>(*timed, "method", "");
      }
    }
  }
  result.device_records = spans;
  ref_time.summary = Summarize(ref_time.samples);
  cand_time.summary = Summarize(cand_time.samples);
  if (!cand_time.samples.empty() && !ref_time.samples.empty()) {
    MergeFindings(result.findings,
                  CallFactsFindings(result.candidate_calls, cand_time.summary.median, "candidate"));
    MergeFindings(result.findings,
                  CallFactsFindings(result.reference_calls, ref_time.summary.median, "reference"));
  }

  // The timed calls' own outputs must be right too (no cache, no replay, no shortcut while
  // timed): the referee rebuilds the sampled calls' inputs and runs the reference on them.
  if (!samples.empty()) {
    Json verify = BaseRequest();
    verify["problem"] = problem;
    verify["actual_dir"] = work + "/timed";
    verify["samples"] = samples;
    verify["vacuous_rel_tol"] = options_.vacuous_rel_tol;
    auto verified = Ask(referee, "verify", verify, options_.step_timeout_s, result, &changed);
    if (!verified) {
      if (changed.empty()) result.message = "verifying the timed calls failed: " + result.message;
      return false;
    }
    for (const Json& row : JsonGet<Json>(*verified, "trials", Json::array())) {
      result.correctness.push_back(row);
    }
    if (!JsonGet<bool>(*verified, "passed", false)) {
      result.status = EvalStatus::kIncorrect;
      result.message =
          "while being timed: " + JsonGet<std::string>(*verified, "message", "mismatch");
      return false;
    }
  }
  result.speedup = BootstrapBlockMedianRatio(ref_blocks, cand_blocks);
  // The two sides ran in two processes; whatever makes one process's calls slower than
  // another's (placement in memory, the cores it landed on) is measured by the reference's own
  // times in both, and the interval is widened by it. Only widened: the candidate's process
  // can slow the reference there, never make the estimate better.
  if (!reference_in_candidate.empty() && ref_time.summary.median > 0 &&
      cand_time.summary.median > 0) {
    const double here = Median(reference_in_candidate);
    result.process_spread = std::abs(here / ref_time.summary.median - 1.0);
    result.speedup_in_process = here / cand_time.summary.median;
    result.speedup->low /= 1.0 + result.process_spread;
    result.speedup->high *= 1.0 + result.process_spread;
  }
  result.reference_time = std::move(ref_time);
  result.candidate_time = std::move(cand_time);
  return true;
}

Result<EvalReport> Executor::Evaluate(const std::string& problem_path,
                                      const std::vector<std::string>& candidate_paths) {
  auto total_start = Clock::now();
  EvalReport report;
  report.problem = Absolute(problem_path);
  if (!fs::exists(report.problem))
    return Status::NotFound("problem file not found: " + problem_path);

  // Candidate code runs only in the sandbox, unless the user chose to run it unconfined.
  if (!worker_.SandboxReady().ok()) return worker_.SandboxReady();
  // With one GPU its referee starts now (torch's import, CUDA), beside the static checks; a
  // failure to start is reported by the reference step, which starts it again.
  if (gpu_pool_->size() == 1 && !options_.build_only) {
    (void)Referee(GpuPool::EnvFor(gpu_pool_->only_gpu()));
  }
  std::vector<EvalResult> results(candidate_paths.size());
  // How each candidate's progress lines name it: "cand 2/3 cuda_swish.py".
  std::vector<ProgressStep> items(candidate_paths.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    items[i] = {static_cast<int>(i + 1), static_cast<int>(items.size()),
                fs::path(candidate_paths[i]).filename().string(), ""};
  }
  if (progress_) progress_->BatchStarted(static_cast<int>(items.size()));
  for (EvalResult& r : results) {
    r.sandbox = worker_.sandbox().Describe();
    r.sandboxed = worker_.sandbox().active();
  }
  // Not vector<bool>: the build threads write their own elements concurrently.
  std::vector<char> proceed(candidate_paths.size(), true);
  // Static checks first: they cost no build and no device.
  for (std::size_t i = 0; i < candidate_paths.size(); ++i) {
    EvalResult& r = results[i];
    r.candidate = Absolute(candidate_paths[i]);
    Json request{{"problem", report.problem},
                 {"candidate", r.candidate},
                 {"torch_ops_policy", options_.torch_ops_policy},
                 {"allowed_ops", options_.allowed_ops}};
    if (!fs::exists(r.candidate)) {
      r.status = EvalStatus::kCompileError;
      r.message = "candidate file not found: " + candidate_paths[i];
      proceed[i] = false;
      continue;
    }
    auto scan_start = Clock::now();
    auto scanned =
        worker_.Run("scan", request, LimitsFor(60), {}, {}, 16 * 1024, Confinement::kSandbox);
    r.scan_seconds = SecondsSince(scan_start);
    if (!scanned.ok()) return scanned.status();
    if (!scanned->result) {
      std::tie(r.status, r.message) = DescribeMissingResult("scan", *scanned);
      proceed[i] = false;
      continue;
    }
    const Json& problem_scan = JsonGet<Json>(*scanned->result, "problem", Json::object());
    if (!JsonGet<bool>(problem_scan, "ok", false)) {
      return Status::InvalidArgument(
          "problem error: " +
          JsonGet<std::string>(problem_scan, "error",
                               JsonGet<std::string>(*scanned->result, "message", "unreadable")));
    }
    const Json& cand = JsonGet<Json>(*scanned->result, "candidate", Json::object());
    if (JsonGet<std::string>(cand, "status", "ok") != "ok") {
      r.status = EvalStatus::kCompileError;
      r.message = JsonGet<std::string>(cand, "message", "");
      proceed[i] = false;
      continue;
    }
    std::string fail = MergeFindings(r.findings, FindingsFrom(cand));
    if (!fail.empty() && options_.static_checks) {
      r.status = EvalStatus::kIncorrect;
      r.message = fail;
      proceed[i] = false;
    }
    if (!options_.static_checks) {
      for (Finding& f : r.findings) f.severity = "warn";
    }
  }
  // A candidate the static checks refused has no step left.
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!proceed[i] && progress_) progress_->ItemFinished(items[i]);
  }

  // Unique per evaluation too: evaluations may run concurrently in one process. Each candidate's
  // work directory is created empty before its process starts (the sandbox mounts it).
  static std::atomic<unsigned> evaluations{0};
  const std::string work_prefix = Absolute(options_.work_dir) + "/" + std::to_string(::getpid()) +
                                  "-" + std::to_string(evaluations++) + "-";
  auto work_dir = [&](std::size_t i) {
    std::string work =
        work_prefix + std::to_string(i) + "-" + fs::path(results[i].candidate).stem().string();
    std::error_code ec;
    if (!fs::exists(work, ec)) fs::create_directories(work, ec);
    return work;
  };
  // With one GPU, the first candidate's process starts now, beside the builds and the reference,
  // and starts CUDA there too: nothing is timed on the device before its turn.
  const bool single_device = gpu_pool_->size() == 1;
  std::unique_ptr<WorkerSession> first_ahead;
  std::size_t first_ahead_for = results.size();
  if (single_device && !options_.build_only) {
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!proceed[i]) continue;
      auto started =
          StartCandidate(report.problem, results[i].candidate, work_dir(i),
                         GpuPool::EnvFor(gpu_pool_->only_gpu()), /*prepare_device=*/true);
      if (started.ok()) {
        first_ahead = std::move(*started);
        first_ahead_for = i;
      }
      break;
    }
  }

  // Builds in parallel (CPU-bound, one cache directory per source), while the referee starts
  // and prepares the reference on the device.
  std::vector<std::thread> pool;
  {
    auto mutex = std::make_shared<std::mutex>();
    auto next = std::make_shared<std::size_t>(0);
    int threads =
        std::max(1, std::min<int>(options_.jobs, static_cast<int>(candidate_paths.size())));
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([this, mutex, next, &results, &proceed, &items] {
        for (;;) {
          std::size_t i;
          {
            std::lock_guard<std::mutex> lock(*mutex);
            while (*next < results.size() && !proceed[*next]) ++*next;
            if (*next >= results.size()) return;
            i = (*next)++;
          }
          {
            CandidateStep building(progress_, StepOf(items[i], "building"), results[i]);
            Build(results[i].candidate, results[i]);
            if (results[i].build_cached) building.EndAs("cached");
          }
          if (results[i].status != EvalStatus::kCorrect || options_.build_only) {
            if (progress_) progress_->ItemFinished(items[i]);
          }
          if (results[i].status != EvalStatus::kCorrect) proceed[i] = false;
        }
      });
    }
  }
  SharedReference shared_reference;
  Status reference_status = Status::Ok();
  if (!options_.build_only) {
    auto reference_start = Clock::now();
    ProgressScope computing(progress_, {0, 0, "reference", "computing"});
    auto reference = PrepareReference(report.problem);
    if (!reference.ok()) computing.set_outcome("failed");
    if (reference.ok() && JsonGet<bool>(*reference, "cached", false))
      computing.set_outcome("cached");
    if (reference.ok()) {
      report.reference = *reference;
      shared_reference.meta = *reference;
      for (EvalResult& r : results) r.reference_seconds = SecondsSince(reference_start);
    } else {
      reference_status = reference.status();
    }
  }
  for (std::thread& t : pool) t.join();
  if (!reference_status.ok()) return reference_status;

  // Device steps: each thread leases a free GPU, takes the next pending candidate and runs all of
  // its steps there; one thread per GPU, so each GPU runs one step at a time. With one GPU, the
  // next candidate's process starts while the current one is on it (it touches no device
  // before its first request), so its interpreter and torch import cost no waiting.
  if (!options_.build_only) {
    std::mutex mutex;
    std::size_t next = 0;
    auto device_steps = [&](std::unique_ptr<WorkerSession> ahead, std::size_t ahead_for) {
      for (;;) {
        GpuPool::Lease lease = gpu_pool_->Acquire();
        std::size_t i;
        {
          std::lock_guard<std::mutex> lock(mutex);
          while (next < results.size() && !proceed[next]) ++next;
          if (next >= results.size()) return;
          i = next++;
        }
        EvalResult& r = results[i];
        r.gpu = lease.gpu();
        std::unique_ptr<WorkerSession> session;
        if (ahead_for == i) session = std::move(ahead);
        ahead.reset();
        ahead_for = results.size();
        if (single_device) {
          std::lock_guard<std::mutex> lock(mutex);
          std::size_t j = next;
          while (j < results.size() && !proceed[j]) ++j;
          if (j < results.size()) {
            auto started =
                StartCandidate(report.problem, results[j].candidate, work_dir(j), lease.Env());
            if (started.ok()) {
              ahead = std::move(*started);
              ahead_for = j;
            }
          }
        }
        try {
          CheckAndTime(report.problem, shared_reference, work_dir(i), lease.Env(), r,
                       std::move(session), items[i]);
        } catch (const std::exception& e) {  // a malformed worker result; never kill the thread
          r.status = EvalStatus::kRuntimeError;
          r.message = std::string("internal error during the device steps: ") + e.what();
        }
        if (progress_) progress_->ItemFinished(items[i]);
        std::error_code ec;
        fs::remove_all(work_dir(i), ec);  // outputs can be large; the verdict and errors are kept
      }
    };
    std::size_t pending = static_cast<std::size_t>(std::count(proceed.begin(), proceed.end(), 1));
    std::size_t threads = std::min(gpu_pool_->size(), pending);
    if (threads <= 1) {
      if (pending > 0) device_steps(std::move(first_ahead), first_ahead_for);
    } else {
      std::vector<std::thread> pool;
      for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back(device_steps, nullptr, results.size());
      for (std::thread& t : pool) t.join();
    }
  }
  if (!options_.build_only) report.reference = shared_reference.Get();  // recomputed, if it was
  for (EvalResult& r : results) r.total_seconds = SecondsSince(total_start);
  report.results = std::move(results);
  return report;
}

Json ToJson(const EvalOptions& o) {
  return Json{{"device", o.device},
              {"correctness_trials", o.correctness_trials},
              {"extra_trials", o.extra_trials},
              {"fp64_trials", o.fp64_trials},
              {"timing_inputs", o.timing_inputs},
              {"timing_trials", o.timing_trials},
              {"timing_rounds", o.timing_rounds},
              {"time_budget_s", o.time_budget_s},
              {"verify_bytes", o.verify_bytes},
              {"atol", o.atol},
              {"rtol", o.rtol},
              {"vacuous_rel_tol", o.vacuous_rel_tol},
              {"precision_policy", o.precision_policy},
              {"precision_bound", o.precision_bound},
              {"precision_factor", o.precision_factor},
              {"torch_ops_policy", o.torch_ops_policy},
              {"allowed_ops", o.allowed_ops},
              {"static_checks", o.static_checks},
              {"compile_baseline", o.compile_baseline},
              {"precompiled_headers", o.precompiled_headers},
              {"jobs", o.jobs},
              {"gpus", o.gpus},
              {"seed", o.seed},
              {"init_seed", o.init_seed},
              {"flush_bytes", o.flush_bytes},
              {"cache_dir", o.cache_dir},
              {"work_dir", o.work_dir},
              {"step_timeout_s", o.step_timeout_s},
              {"build_timeout_s", o.build_timeout_s},
              {"reference_timeout_s", o.reference_timeout_s},
              // Not --unsafe-no-sandbox: running unconfined is chosen anew by each process.
              {"pass_env", o.pass_env},
              {"sandbox_read_only", o.sandbox_read_only},
              {"cutlass_include_dir", o.cutlass_include_dir},
              {"cutlass_version", o.cutlass_version}};
}

EvalOptions EvalOptionsFromJson(const Json& j) {
  EvalOptions o;
#define KP_FIELD(name) o.name = JsonGet<decltype(o.name)>(j, #name, o.name)
  KP_FIELD(device);
  KP_FIELD(correctness_trials);
  KP_FIELD(extra_trials);
  KP_FIELD(fp64_trials);
  KP_FIELD(timing_inputs);
  KP_FIELD(timing_trials);
  KP_FIELD(timing_rounds);
  KP_FIELD(time_budget_s);
  KP_FIELD(verify_bytes);
  KP_FIELD(atol);
  KP_FIELD(rtol);
  KP_FIELD(vacuous_rel_tol);
  KP_FIELD(precision_policy);
  KP_FIELD(precision_bound);
  KP_FIELD(precision_factor);
  KP_FIELD(torch_ops_policy);
  KP_FIELD(allowed_ops);
  KP_FIELD(static_checks);
  KP_FIELD(compile_baseline);
  KP_FIELD(precompiled_headers);
  KP_FIELD(jobs);
  KP_FIELD(gpus);
  KP_FIELD(seed);
  KP_FIELD(init_seed);
  KP_FIELD(flush_bytes);
  KP_FIELD(cache_dir);
  KP_FIELD(work_dir);
  KP_FIELD(step_timeout_s);
  KP_FIELD(build_timeout_s);
  KP_FIELD(reference_timeout_s);
  KP_FIELD(pass_env);
  KP_FIELD(sandbox_read_only);
  KP_FIELD(cutlass_include_dir);
  KP_FIELD(cutlass_version);
#undef KP_FIELD
  return o;
}

}  // namespace kernelpro::eval
