#include "search/candidate_evaluator.h"

#include <utility>

namespace kernelpro::search {
namespace {

class ExecutorEvaluator : public CandidateEvaluator {
 public:
  ExecutorEvaluator(Executor& executor, ProfileOptions profile)
      : executor_(executor), profile_(std::move(profile)) {}
  Result<std::vector<EvalResult>> Evaluate(const std::string& problem,
                                           const std::vector<std::string>& candidates) override {
    auto report = executor_.Evaluate(problem, candidates);
    if (!report.ok()) return report.status();
    return std::move(report->results);
  }
  Result<Metrics> Profile(const std::string& problem, const std::string& candidate) override {
    return ProfileCandidate(executor_, problem, candidate, profile_);
  }

 private:
  Executor& executor_;
  ProfileOptions profile_;
};

}  // namespace

std::unique_ptr<CandidateEvaluator> NewExecutorEvaluator(Executor& executor,
                                                         ProfileOptions profile) {
  return std::make_unique<ExecutorEvaluator>(executor, std::move(profile));
}

}  // namespace kernelpro::search
