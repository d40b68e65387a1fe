#include "agents/benchmarking_agent.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "eval/profile_runner.h"

namespace kernelpro::agents {
namespace {

std::string Normalised(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return (ec ? std::filesystem::path(path) : absolute).lexically_normal().string();
}

}  // namespace

Result<roofline::ReferenceAnalysis> RunStageOne(eval::Executor& executor,
                                                const std::string& problem_path,
                                                const std::optional<roofline::GpuSpec>& forced,
                                                const roofline::RooflineOptions& roofline) {
  const std::string problem = std::filesystem::absolute(problem_path).lexically_normal().string();
  Json request = executor.BaseRequest();
  request["problem"] = problem;
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(executor.options().step_timeout_s);
  // On the first free GPU of the executor's pool, alone on it.
  auto outcome = [&] {
    eval::GpuPool::Lease lease = executor.gpu_pool().Acquire();
    return executor.worker().Run("analyze", request, limits, lease.Env());
  }();
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
  roofline::GpuSpec gpu;
  std::vector<std::string> notes;
  if (forced) {
    gpu = *forced;
    if (!detected.empty()) {
      auto found = roofline::FindGpu(detected);
      if (!found.ok() || found->key != gpu.key) {
        notes.push_back("analysed for " + gpu.key + " (--gpu) while the reference ran on \"" +
                        detected + "\"");
      }
    }
  } else {
    auto found = roofline::FindGpu(detected);
    if (!found.ok()) return Status::NotFound("detected GPU: " + found.status().message());
    gpu = *found;
  }
  auto analysis = roofline::AnalyzeReference(result, problem_path, gpu, roofline);
  if (!analysis.ok()) return analysis.status();
  analysis->notes.insert(analysis->notes.begin(), notes.begin(), notes.end());
  return analysis;
}

Result<roofline::ReferenceAnalysis> RunStageOneMeasured(eval::Executor& executor,
                                                        const std::string& problem,
                                                        const BenchmarkingOptions& options) {
  Result<roofline::ReferenceAnalysis> analysis = [&] {
    ProgressScope analyzing(executor.progress(), {0, 0, "reference", "analyzing (stage 1)"});
    auto analysed = RunStageOne(executor, problem, options.gpu, options.roofline);
    if (!analysed.ok()) analyzing.set_outcome("failed");
    return analysed;
  }();
  if (!analysis.ok()) return analysis;
  if (executor.options().device != "cuda") {
    if (analysis->program && analysis->program->flops_pending) {
      analysis->notes.push_back("program analysed on " + executor.options().device +
                                ": no ncu measurement, so its FLOPs stay unknown");
    } else {
      analysis->notes.push_back("reference run on " + executor.options().device +
                                ": no ncu measurement, theoretical only");
    }
    return analysis;
  }
  if (!options.measure) {
    analysis->notes.push_back("ncu measurement turned off: theoretical only");
    return analysis;
  }
  eval::ProfileOptions profile;
  profile.sass = false;
  profile.timeline = false;
  profile.ncu_options = options.ncu;
  Result<profile::Metrics> metrics =
      eval::ProfileCandidate(executor, Normalised(problem), "", profile);
  if (!metrics.ok()) {
    analysis->notes.push_back("ncu profile of the reference failed: " + metrics.status().message() +
                              "; theoretical only");
  } else {
    roofline::ValidateWithProfile(*analysis, *metrics);
  }
  return analysis;
}

BenchmarkingAgent::BenchmarkingAgent(StageOneRunner run_stage_one)
    : run_stage_one_(std::move(run_stage_one)) {}

BenchmarkingAgent BenchmarkingAgent::ForExecutor(eval::Executor& executor,
                                                 BenchmarkingOptions options) {
  return BenchmarkingAgent([&executor, options = std::move(options)](const std::string& problem) {
    return RunStageOneMeasured(executor, problem, options);
  });
}

int BenchmarkingAgent::stage_one_runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

Result<roofline::ReferenceAnalysis> BenchmarkingAgent::Analyze(const std::string& problem,
                                                               const std::string& saved) {
  const std::string key = Normalised(problem);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;

  std::string saved_note;
  if (!saved.empty() && std::filesystem::exists(saved)) {
    Result<roofline::ReferenceAnalysis> loaded = roofline::ReadReferenceAnalysisFile(saved);
    if (!loaded.ok()) {
      saved_note =
          saved + " could not be read (" + loaded.status().message() + "); Stage 1 ran again";
    } else if (Normalised(loaded->problem) != key) {
      saved_note = saved + " was for " + loaded->problem + "; Stage 1 ran again for " + problem;
    } else {
      cache_.emplace(key, loaded);
      return loaded;
    }
  }

  ++runs_;
  Result<roofline::ReferenceAnalysis> analysis = run_stage_one_(key);
  if (analysis.ok()) {
    if (!saved_note.empty()) analysis->notes.push_back(saved_note);
    if (!saved.empty()) {
      // Whole or not at all: a truncated analysis would be rejected and redone by a resumed run.
      Status written = WriteFileAtomically(saved, DumpJson(ToJson(*analysis)) + "\n");
      if (!written.ok()) {
        analysis->notes.push_back("Stage 1 could not be saved for a resumed run: " +
                                  written.message());
      }
    }
  }
  cache_.emplace(key, analysis);
  return analysis;
}

}  // namespace kernelpro::agents
