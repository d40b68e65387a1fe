#include "eval/builder.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>
#include <tuple>

#include "core/json_io.h"
#include "core/parallel.h"

namespace kernelpro::eval {

bool BuildsTorchExtension(const std::string& source) {
  return source.find("cpp_extension") != std::string::npos ||
         source.find("load_inline") != std::string::npos;
}

namespace {

namespace fs = std::filesystem;

// The shared objects the record at `record_path` names, when the record is this interpreter's and
// this CUTLASS release's and every object is still there; none otherwise. Another CUTLASS release
// may change what a CUTLASS candidate builds (its build keys include the release): such a record
// sends the candidate through the build step again, which finds every other candidate's builds
// cached.
std::optional<std::vector<std::string>> RecordedBuild(const std::string& record_path,
                                                      const std::string& python,
                                                      const std::string& cutlass_version) {
  auto record = ReadJsonFile(record_path);
  if (!record.ok() || JsonGet<std::string>(*record, "python", "") != python ||
      JsonGet<std::string>(*record, "cutlass", "") != cutlass_version) {
    return std::nullopt;
  }
  std::vector<std::string> objects =
      JsonGet<std::vector<std::string>>(*record, "shared_objects", {});
  bool present = !objects.empty();
  for (const std::string& so : objects) present = present && fs::is_regular_file(so);
  if (!present) return std::nullopt;
  return objects;
}

// Reads the build step's result into `result`; true when the candidate built.
bool ReadBuildResult(const Json& json, EvalResult& result) {
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
    return false;
  }
  result.status = EvalStatus::kCorrect;  // provisional: built and importable
  return true;
}

// The worker's `build` step, cached per source.
class WorkerBuilder : public Builder {
 public:
  void Build(const EvalContext& context, const std::string& candidate, EvalResult& result) override;
};

void WorkerBuilder::Build(const EvalContext& context, const std::string& candidate,
                          EvalResult& result) {
  const EvalOptions& options = context.options;
  const WorkerClient& worker = context.worker;
  auto start = std::chrono::steady_clock::now();
  Json request = CandidateRequest(context, candidate, Json());
  if (request.is_null()) {
    result.status = EvalStatus::kCompileError;
    result.message = "cannot read the candidate file " + candidate;
    return;
  }
  // A source built before needs no build process: the record beside its scope names its shared
  // objects. The candidate's process loads them through the same content-addressed cache, and
  // rebuilds there if they went stale.
  const std::string scope = JsonGet<std::string>(request, "build_root", "");
  const std::string record_path = scope + ".built.json";
  if (auto objects = RecordedBuild(record_path, worker.python(), options.cutlass_version)) {
    std::error_code touched;  // last used, for `kernelpro cache prune`
    fs::last_write_time(record_path, fs::file_time_type::clock::now(), touched);
    result.shared_objects = std::move(*objects);
    result.build_cached = true;
    result.build_seconds = SecondsSince(start);
    result.status = EvalStatus::kCorrect;
    return;
  }
  // Not cached: offer the precompiled headers (made now by the first build that gets here).
  if (options.precompiled_headers) {
    auto source = ReadFileText(candidate);
    if (!source.ok() || BuildsTorchExtension(*source)) {
      OfferPrecompiledHeaders(HeadersForBuilds(context, &result.build_notes), request);
    }
  }
  // A build that runs beside others gets a share of the cores for its own compiler jobs.
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::string max_jobs = std::to_string(std::max(1u, cores / std::max(1, options.jobs)));
  auto outcome = worker.Run("build", request, StepLimits(options.build_timeout_s),
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
  if (ReadBuildResult(*outcome->result, result) && !result.shared_objects.empty()) {
    // Best effort: without the record the next evaluation runs the (cached) build step again.
    (void)WriteJsonFile(record_path, Json{{"python", worker.python()},
                                          {"cutlass", options.cutlass_version},
                                          {"shared_objects", result.shared_objects}});
  }
}

}  // namespace

std::shared_ptr<Builder> MakeWorkerBuilder() { return std::make_shared<WorkerBuilder>(); }

void BuildAll(Builder& builder, const EvalContext& context, CandidateBatch& batch) {
  const EvalOptions& options = context.options;
  ProgressSink* progress = context.progress;
  const std::vector<std::size_t> pending = batch.Pending();
  const int threads =
      std::max(1, std::min<int>(options.jobs, static_cast<int>(batch.results.size())));
  ParallelFor(pending.size(), static_cast<std::size_t>(threads), [&](std::size_t k) {
    const std::size_t i = pending[k];
    EvalResult& result = batch.results[i];
    {
      CandidateStep building(progress, StepOf(batch.items[i], "building"), result);
      builder.Build(context, result.candidate, result);
      if (result.build_cached) building.EndAs("cached");
    }
    if (result.status != EvalStatus::kCorrect || options.build_only) {
      if (progress) progress->ItemFinished(batch.items[i]);
    }
    if (result.status != EvalStatus::kCorrect) batch.proceed[i] = false;
  });
}

}  // namespace kernelpro::eval
