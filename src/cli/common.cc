#include "cli/common.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "agents/benchmarking_agent.h"

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

Result<ReferenceAnalysis> RunStageOne(Executor& executor, const std::string& problem,
                                      const std::optional<GpuSpec>& forced,
                                      const RooflineOptions& roofline) {
  return agents::RunStageOne(executor, problem, forced, roofline);
}

}  // namespace kernelpro::cli
