#include "eval/static_checks.h"

#include <filesystem>
#include <tuple>

namespace kernelpro::eval {
namespace {

// One candidate's scan: whether it stays in the running (else `result` holds its verdict), or the
// evaluation's error.
Result<bool> ScanCandidate(const WorkerClient& worker, const EvalOptions& options,
                           const std::string& problem, const std::string& path,
                           EvalResult& result) {
  result.candidate = AbsolutePath(path);
  Json request{{"problem", problem},
               {"candidate", result.candidate},
               {"torch_ops_policy", options.torch_ops_policy},
               {"allowed_ops", options.allowed_ops}};
  if (!std::filesystem::exists(result.candidate)) {
    result.status = EvalStatus::kCompileError;
    result.message = "candidate file not found: " + path;
    return false;
  }
  auto scan_start = std::chrono::steady_clock::now();
  auto scanned =
      worker.Run("scan", request, StepLimits(60), {}, {}, 16 * 1024, Confinement::kSandbox);
  result.scan_seconds = SecondsSince(scan_start);
  if (!scanned.ok()) return scanned.status();
  if (!scanned->result) {
    std::tie(result.status, result.message) = DescribeMissingResult("scan", *scanned);
    return false;
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
    result.status = EvalStatus::kCompileError;
    result.message = JsonGet<std::string>(cand, "message", "");
    return false;
  }
  bool proceed = true;
  std::string fail = MergeFindings(result.findings, FindingsFrom(cand));
  if (!fail.empty() && options.static_checks) {
    result.status = EvalStatus::kIncorrect;
    result.message = fail;
    proceed = false;
  }
  if (!options.static_checks) {
    for (Finding& f : result.findings) f.severity = "warn";
  }
  return proceed;
}

}  // namespace

Status RunStaticChecks(const WorkerClient& worker, const EvalOptions& options,
                       const std::string& problem, const std::vector<std::string>& paths,
                       ProgressSink* progress, CandidateBatch& batch) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    Result<bool> proceed = ScanCandidate(worker, options, problem, paths[i], batch.results[i]);
    if (!proceed.ok()) return proceed.status();
    if (!*proceed) batch.proceed[i] = false;
  }
  // A candidate the static checks refused has no step left.
  for (std::size_t i = 0; i < batch.items.size(); ++i) {
    if (!batch.proceed[i] && progress) progress->ItemFinished(batch.items[i]);
  }
  return Status::Ok();
}

}  // namespace kernelpro::eval
