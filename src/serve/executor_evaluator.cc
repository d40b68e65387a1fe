#include "serve/executor_evaluator.h"

#include <filesystem>

#include "app/eval_json.h"
#include "core/hash.h"

namespace kernelpro::serve {
namespace {

namespace fs = std::filesystem;

// Writes `text` to `path` unless it already holds exactly that.
Status WriteIfChanged(const std::string& path, const std::string& text) {
  auto existing = ReadFileText(path);
  if (existing.ok() && *existing == text) return Status::Ok();
  return WriteFileAtomically(path, text);
}

class ExecutorEvaluator : public JobEvaluator {
 public:
  ExecutorEvaluator(std::vector<eval::Executor> per_slot, std::string state_dir)
      : per_slot_(std::move(per_slot)), state_dir_(fs::absolute(state_dir).string()) {}

  std::size_t slots() const override { return per_slot_.size(); }

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
};

}  // namespace

std::unique_ptr<JobEvaluator> MakeExecutorEvaluator(std::vector<eval::Executor> per_slot,
                                                    std::string state_dir) {
  return std::make_unique<ExecutorEvaluator>(std::move(per_slot), std::move(state_dir));
}

}  // namespace kernelpro::serve
