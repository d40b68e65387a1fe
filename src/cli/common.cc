#include "cli/common.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace kernelpro::cli {

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kernelpro";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kernelpro";
  return ".kernelpro/cache";
}

std::optional<Executor> MakeExecutor(EvalOptions& options, const std::string& python,
                                     const char* command_name) {
  if (options.cache_dir.empty()) options.cache_dir = DefaultCacheDir();
  if (options.work_dir.empty()) {
    options.work_dir = (std::filesystem::temp_directory_path() / "kernelpro-work").string();
  }
  WorkerOptions worker_options;
  worker_options.python = python;
  worker_options.scratch_dir = options.work_dir + "/requests";
  auto worker = WorkerClient::Create(worker_options);
  if (!worker.ok()) {
    std::cerr << "kernelpro " << command_name << ": " << worker.status().message() << "\n";
    return std::nullopt;
  }
  return Executor(std::move(*worker), options);
}

Result<ReferenceAnalysis> RunStageOne(Executor& executor, const std::string& problem_path,
                                      const std::optional<GpuSpec>& forced,
                                      const RooflineOptions& roofline) {
  const std::string problem = std::filesystem::absolute(problem_path).lexically_normal().string();
  Json request = executor.BaseRequest();
  request["problem"] = problem;
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(executor.options().step_timeout_s);
  auto outcome = executor.worker().Run("analyze", request, limits);
  if (!outcome.ok())
    return Status::Internal("could not run the analyze step: " + outcome.status().message());
  if (!outcome->result) {
    return Status::Internal("the analyze step died: " + outcome->process.Describe() + "\n" +
                            outcome->process.stderr_text);
  }
  const Json& result = *outcome->result;
  if (std::string status = JsonGet<std::string>(result, "status", ""); status != "ok") {
    std::string message = status + ": " + JsonGet<std::string>(result, "message", "");
    if (status == "device_error") message += " and name the GPU to analyse for with --gpu NAME";
    return Status::InvalidArgument(message);
  }
  const std::string detected = JsonGet<std::string>(result, "device_name", "");
  GpuSpec gpu;
  std::vector<std::string> notes;
  if (forced) {
    gpu = *forced;
    if (!detected.empty()) {
      auto found = FindGpu(detected);
      if (!found.ok() || found->key != gpu.key) {
        notes.push_back("analysed for " + gpu.key + " (--gpu) while the reference ran on \"" +
                        detected + "\"");
      }
    }
  } else {
    auto found = FindGpu(detected);
    if (!found.ok()) return Status::NotFound("detected GPU: " + found.status().message());
    gpu = *found;
  }
  auto analysis = AnalyzeReference(result, problem_path, gpu, roofline);
  if (!analysis.ok()) return analysis.status();
  analysis->notes.insert(analysis->notes.begin(), notes.begin(), notes.end());
  return analysis;
}

}  // namespace kernelpro::cli
