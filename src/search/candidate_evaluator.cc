#include "search/candidate_evaluator.h"

#include <utility>

namespace kernelpro::search {
namespace {

class ExecutorEvaluator : public CandidateEvaluator {
 public:
  ExecutorEvaluator(eval::Executor& executor, eval::ProfileOptions profile)
      : executor_(executor), profile_(std::move(profile)) {}
  Result<std::vector<eval::EvalResult>> Evaluate(
      const std::string& problem, const std::vector<std::string>& candidates) override {
    auto report = executor_.Evaluate(problem, candidates);
    if (!report.ok()) return report.status();
    return std::move(report->results);
  }
  Result<profile::Metrics> Profile(const std::string& problem,
                                   const std::string& candidate) override {
    return eval::ProfileCandidate(executor_, problem, candidate, profile_);
  }

 private:
  eval::Executor& executor_;
  eval::ProfileOptions profile_;
};

}  // namespace

std::unique_ptr<CandidateEvaluator> NewExecutorEvaluator(eval::Executor& executor,
                                                         eval::ProfileOptions profile) {
  return std::make_unique<ExecutorEvaluator>(executor, std::move(profile));
}

}  // namespace kernelpro::search
