#include "serve/executor_evaluator.h"

#include <filesystem>

#include "app/eval_json.h"
#include "core/hash.h"
#include "eval/candidate_step.h"

namespace kernelpro::serve {
namespace {

namespace fs = std::filesystem;

// Writes `text` to `path` unless it already holds exactly that.
Status WriteIfChanged(const std::string& path, const std::string& text) {
  auto existing = ReadFileText(path);
  if (existing.ok() && *existing == text) return Status::Ok();
  return WriteFileAtomically(path, text);
}

// The blank workers of `executor`'s slot: started as its device runner would start a candidate's
// process (the same sandbox, limits, GPU and folders).
std::shared_ptr<CandidatePool> MakePool(const eval::Executor& executor, const std::string& root,
                                        int depth) {
  const eval::EvalOptions& o = executor.options();
  CandidatePoolConfig config;
  config.root = root;
  config.depth = depth;
  // Spelt as the runner spells the paths it mounts, so that a hand-over's check compares like with
  // like.
  config.work_dir = eval::AbsolutePath(o.work_dir);
  config.cache_dir = eval::AbsolutePath(o.cache_dir);
  config.device = o.device;
  config.env = eval::GpuPool::EnvFor(executor.gpu_pool().only_gpu());
  if (!o.cutlass_include_dir.empty()) {
    config.cutlass = {{"include_dir", o.cutlass_include_dir}, {"version", o.cutlass_version}};
  }
  config.limits = eval::CandidateProcessLimits(o);
  std::error_code ec;
  fs::create_directories(root, ec);
  return std::make_shared<CandidatePool>(executor.worker(), config);
}

class ExecutorEvaluator : public JobEvaluator {
 public:
  ExecutorEvaluator(std::vector<eval::Executor> per_slot, std::string state_dir, int blank_workers)
      : per_slot_(std::move(per_slot)), state_dir_(fs::absolute(state_dir).string()) {
    if (blank_workers <= 0) return;
    for (std::size_t slot = 0; slot < per_slot_.size(); ++slot) {
      pools_.push_back(
          MakePool(per_slot_[slot], state_dir_ + "/slots/" + std::to_string(slot), blank_workers));
      per_slot_[slot].set_candidate_processes(pools_.back());
    }
  }

  std::size_t slots() const override { return per_slot_.size(); }

  void PrepareSlot(std::size_t slot) override {
    if (slot < pools_.size()) pools_[slot]->Prepare();
  }

  Json Facts() const override {
    if (pools_.empty()) return Json{{"blank_workers", false}};
    int handed = 0, fresh = 0;
    std::string reason;
    for (const auto& pool : pools_) {
      const CandidatePool::Counts c = pool->counts();
      handed += c.handed_over;
      fresh += c.started_fresh;
      if (!c.last_reason.empty()) reason = c.last_reason;
    }
    return Json{{"blank_workers", true},
                {"candidates_given_blank_workers", handed},
                {"candidates_given_fresh_processes", fresh},
                {"last_fresh_reason", reason}};
  }

  Result<Json> Evaluate(std::size_t slot, const std::string& id, const EvalJob& job) override {
    const std::string problem =
        state_dir_ + "/problems/" + Sha256Hex(job.problem_source).substr(0, 24) + "/problem.py";
    if (Status s = WriteIfChanged(problem, job.problem_source); !s.ok()) return s;
    const std::string folder = state_dir_ + "/jobs/" + id;
    const std::string candidate = folder + "/candidate.py";
    if (Status s = WriteFileAtomically(candidate, job.candidate_source); !s.ok()) return s;
    eval::Executor executor = per_slot_.at(slot).WithOptions(job.options);
    auto report = executor.Evaluate(problem, {candidate});
    std::error_code ec;
    fs::remove_all(folder, ec);
    if (!report.ok()) return report.status();
    if (report->results.empty()) return Status::Internal("the evaluation gave no result");
    return app::EvalResultJson(*report, report->results.front(), std::nullopt,
                               job.options.build_only);
  }

 private:
  std::vector<eval::Executor> per_slot_;
  const std::string state_dir_;
  std::vector<std::shared_ptr<CandidatePool>> pools_;  // one per slot, with blank workers
};

}  // namespace

std::unique_ptr<JobEvaluator> MakeExecutorEvaluator(std::vector<eval::Executor> per_slot,
                                                    std::string state_dir, int blank_workers) {
  return std::make_unique<ExecutorEvaluator>(std::move(per_slot), std::move(state_dir),
                                             blank_workers);
}

}  // namespace kernelpro::serve
