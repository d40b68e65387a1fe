#include "export/package_export.h"

#include <chrono>

#include "report/stored_run.h"
#include "store/run_store.h"

namespace kernelpro::packaging {

Json EvaluationFacts(const Json& eval_result, const std::string& source, const Json& device_info) {
  Json facts = {{"status", JsonGet<std::string>(eval_result, "status", "unknown")},
                {"criterion", JsonGet<std::string>(eval_result, "criterion", "")},
                {"timing_method", JsonGet<std::string>(eval_result, "timing_method", "")},
                {"source", source}};
  const Json estimate = JsonGet<Json>(eval_result, "speedup", nullptr);
  if (estimate.is_number()) {
    const Json interval = JsonGet<Json>(eval_result, "speedup_interval", nullptr);
    const bool bounds = interval.is_array() && interval.size() == 2 && interval[0].is_number() &&
                        interval[1].is_number();
    facts["speedup"] = {{"estimate", estimate},
                        {"low", bounds ? interval[0] : estimate},
                        {"high", bounds ? interval[1] : estimate}};
  }
  for (const char* key : {"reference_ms", "candidate_ms", "sol_fraction"}) {
    const Json value = JsonGet<Json>(eval_result, key, nullptr);
    if (value.is_number()) facts[key] = value;
  }
  // The shape checks of the eval result (docs/export.md, "Guards"), when it carries them.
  const Json shapes = JsonGet<Json>(eval_result, "shapes", nullptr);
  if (shapes.is_object()) facts["shapes"] = shapes;
  const std::string gpu = JsonGet<std::string>(device_info, "gpu_name", "");
  if (!gpu.empty()) facts["device_name"] = gpu;
  const std::string torch = JsonGet<std::string>(device_info, "torch_version", "");
  if (!torch.empty()) facts["torch_version"] = torch;
  return facts;
}

bool ShownFaster(const Json& evaluation) {
  const Json speedup = JsonGet<Json>(evaluation, "speedup", nullptr);
  return speedup.is_object() && JsonGet<double>(speedup, "low", 0) > 1.0;
}

Result<ExportedPackage> WritePackage(const eval::Executor& executor, const ExportRequest& request) {
  Json step = executor.BaseRequest();
  step["problem"] = request.problem;
  step["candidate"] = request.candidate;
  step["device"] = request.device;
  step["out_dir"] = request.out_dir;
  step["evaluation"] = request.evaluation;
  if (!request.name.empty()) step["name"] = request.name;
  // The interpreter the package's README tells the user to install and check it with: the one
  // kernelpro runs, which has torch (a bare `pip` or `python` on PATH may not).
  step["python"] = executor.worker().python();
  const eval::EvalOptions& options = executor.options();
  if (!options.cutlass_include_dir.empty()) {
    step["cutlass"] = {{"include_dir", options.cutlass_include_dir},
                       {"version", options.cutlass_version}};
  }
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(options.step_timeout_s);
  // It imports the candidate: sandboxed, seeing the problem, the candidate and out_dir alone.
  auto outcome =
      executor.worker().Run("export", step, limits, {}, {}, 16 * 1024, eval::Confinement::kSandbox);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->result) {
    return Status::Internal("the export step died: " + outcome->process.Describe());
  }
  const Json& r = *outcome->result;
  if (JsonGet<std::string>(r, "status", "") != "ok") {
    return Status::InvalidArgument(JsonGet<std::string>(r, "message", "the export step failed"));
  }
  ExportedPackage package;
  package.package = JsonGet<std::string>(r, "package", "");
  package.distribution = JsonGet<std::string>(r, "distribution", "");
  package.op_name = JsonGet<std::string>(r, "op_name", "");
  package.extensions = JsonGet<std::vector<std::string>>(r, "extensions", {});
  package.guards = JsonGet<std::vector<std::string>>(r, "guards", {});
  package.notes = JsonGet<std::vector<std::string>>(r, "notes", {});
  package.files = JsonGet<std::vector<std::string>>(r, "files", {});
  return package;
}

Result<RunBest> ReadRunBest(const std::string& run_dir) {
  store::RunStoreOptions options;
  options.create = false;
  auto store = store::RunStore::Open(run_dir, options);
  if (!store.ok()) return store.status();
  auto runs = (*store)->ListRuns();
  if (!runs.ok()) return runs.status();
  auto run = report::ReadStoredRun(**store, run_dir);
  if (!run.ok()) return run.status();
  const report::RunReportInput& input = (*run)->input;
  // The same node best.py holds: the run's own rule (search/best_rule.h through BestNode).
  const std::optional<int> best = input.summary.best;
  if (!best) {
    return Status::NotFound(
        "the run has no best kernel: no correct kernel was shown faster than the reference "
        "(its whole speedup interval above 1x), so there is nothing to export; export a "
        "candidate with --problem and --candidate instead");
  }
  auto info = (*run)->nodes.find(*best);
  if (info == (*run)->nodes.end() || info->second.candidate_id == 0) {
    return Status::NotFound("the run's best node n" + std::to_string(*best) +
                            " has no stored candidate");
  }
  auto candidate = (*store)->GetCandidate(info->second.candidate_id);
  if (!candidate.ok()) return candidate.status();
  auto evaluation = (*store)->LatestEvaluation(info->second.candidate_id);
  if (!evaluation.ok()) return evaluation.status();
  if (!evaluation->has_value()) {
    return Status::NotFound("the run's best node n" + std::to_string(*best) +
                            " has no stored evaluation");
  }
  RunBest out;
  out.problem = input.config.problem;
  out.problem_sha256 = runs->empty() ? "" : runs->front().problem_hash;
  out.device = input.config.device;
  if (input.stage1) out.device_name = input.stage1->device_name;
  out.candidate_source = candidate->source;
  out.candidate_file = info->second.file;
  out.node = "n" + std::to_string(*best);
  out.result = (**evaluation).result;
  return out;
}

}  // namespace kernelpro::packaging
