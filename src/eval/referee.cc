#include "eval/referee.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "eval/candidate_step.h"

namespace kernelpro::eval {
namespace {

std::string GpuKey(const Referees::Env& env) {
  auto gpu = env.find("CUDA_VISIBLE_DEVICES");
  return gpu == env.end() ? "" : gpu->second;
}

std::vector<int> Seeds(std::uint64_t base, int offset, int count) {
  std::vector<int> seeds;
  for (int i = 0; i < count; ++i) seeds.push_back(static_cast<int>(base + offset + i));
  return seeds;
}

}  // namespace

std::string ManifestDigest(const Json& reference) {
  return JsonGet<std::string>(reference, "manifest_digest", "");
}

Result<WorkerSession*> Referees::For(const EvalContext& context, const Env& env) {
  const EvalOptions& options = context.options;
  const std::string key = GpuKey(env);
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<WorkerSession>& slot = by_gpu_[key];
  if (slot && slot->alive()) return slot.get();
  prepared_.erase(key);  // a new process has nothing loaded
  // Unconfined: it runs only the problem's own code, and reads the reference cache a sandboxed
  // process never sees. No CPU-time limit: it serves every candidate of the run.
  ProcessLimits limits;
  limits.max_file_bytes = 64ull << 30;
  limits.max_open_files = 4096;
  // It starts CUDA at once: it is started before anything is timed on its GPU.
  Json prepare{{"prepare", {{"device", options.device}, {"start_device", true}}}};
  // torch keeps the kernels it compiles at run time (jiterator, NVRTC) there, so a later run loads
  // them instead of compiling again; no sandboxed process sees this folder.
  Env referee_env = env;
  const std::string kernels = AbsolutePath(options.cache_dir) + "/kernels";
  std::error_code ec;
  std::filesystem::create_directories(kernels, ec);
  if (!ec) referee_env["PYTORCH_KERNEL_CACHE_PATH"] = kernels;
  auto started = WorkerSession::Start(context.worker, "referee", prepare, limits, referee_env,
                                      Confinement::kNone);
  if (!started.ok()) return started.status();
  slot = std::move(*started);
  return slot.get();
}

namespace {

// The reference step's request (the inputs probe takes the same: its cache key is the same).
Json ReferenceRequest(const EvalContext& context, const std::string& problem, bool rebuild) {
  const EvalOptions& options = context.options;
  Json request = context.base_request;
  request["problem"] = problem;
  request["cache_dir"] = AbsolutePath(options.cache_dir);
  request["rebuild"] = rebuild;
  request["check_seeds"] = Seeds(options.seed, 0, options.correctness_trials);
  request["extra_seeds"] = Seeds(options.seed, 1000, options.extra_trials);
  request["timing_seeds"] = Seeds(options.seed, 2000, std::max(1, options.timing_inputs));
  request["fp64_trials"] = options.fp64_trials;
  // The shape variants (python/kernelpro_worker/shapes.py), from seeds of their own.
  request["shapes"] = options.shapes;
  request["shape_seed"] = static_cast<int>(options.seed + 3000);
  return request;
}

// A referee step's reply as a result: the reply itself when its status is ok, else why not.
Result<Json> ReferenceReply(const SessionReply& reply, const std::string& step) {
  if (!reply.result) {
    std::string why = ClassifyProcessFailure("the " + step, *reply.ended).second;
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
  return meta;
}

}  // namespace

Status Referees::ProbeInputs(const EvalContext& context, const std::string& problem,
                             const Env& env) {
  auto referee = For(context, env);
  if (!referee.ok()) return referee.status();
  SessionReply reply = (*referee)->Call("probe_inputs", ReferenceRequest(context, problem, false),
                                        std::chrono::seconds(context.options.reference_timeout_s));
  return ReferenceReply(reply, "inputs probe").status();
}

Result<Json> Referees::RunReference(const EvalContext& context, const std::string& problem,
                                    const Env& env, bool rebuild) {
  const EvalOptions& options = context.options;
  auto referee = For(context, env);
  if (!referee.ok()) return referee.status();
  SessionReply reply = (*referee)->Call("reference", ReferenceRequest(context, problem, rebuild),
                                        std::chrono::seconds(options.reference_timeout_s));
  auto result = ReferenceReply(reply, "reference step");
  if (!result.ok()) return result.status();
  const Json& meta = *result;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    prepared_[GpuKey(env)][problem] = ManifestDigest(meta);
  }
  return meta;
}

bool Referees::HasLoaded(const Env& env, const std::string& problem, const Json& reference) {
  std::lock_guard<std::mutex> lock(mutex_);
  return prepared_[GpuKey(env)][problem] == ManifestDigest(reference);
}

Json CompareRequest(const EvalContext& context, const std::string& problem, const Json& reference,
                    const std::string& actual_dir) {
  const EvalOptions& options = context.options;
  Json compare = context.base_request;
  compare["reference_dir"] = JsonGet<std::string>(reference, "reference_dir", "");
  compare["reference"] =
      PickFields(reference, {"outputs", "vacuous", "fp32", "reference_fp64_error", "fp64_trials",
                             "reference_manifest", "expected_recipe"});
  // Expected outputs too large to store are recomputed from the problem and the trial's inputs
  // (reference_step.recompute_expected) and checked against their digest.
  compare["problem"] = problem;
  compare["inputs_dir"] = JsonGet<std::string>(reference, "inputs_dir", "");
  compare["inputs_manifest"] = JsonGet<Json>(reference, "inputs_manifest", Json::object());
  compare["inputs_recipe"] = JsonGet<Json>(reference, "inputs_recipe", Json::object());
  compare["vacuous_rel_tol"] = options.vacuous_rel_tol;
  compare["precision_policy"] = options.precision_policy;
  compare["precision_bound"] = options.precision_bound;
  compare["precision_factor"] = options.precision_factor;
  compare["actual_dir"] = actual_dir;
  return compare;
}

Json SharedReference::Get() {
  std::lock_guard<std::mutex> lock(mutex_);
  return meta_;
}

void SharedReference::Set(Json meta) {
  std::lock_guard<std::mutex> lock(mutex_);
  meta_ = std::move(meta);
}

Result<Json> SharedReference::Refresh(const Json& stale,
                                      const std::function<Result<Json>()>& recompute) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ManifestDigest(meta_) != ManifestDigest(stale)) return meta_;
  auto rebuilt = recompute();
  if (rebuilt.ok()) meta_ = *rebuilt;
  return rebuilt;
}

}  // namespace kernelpro::eval
