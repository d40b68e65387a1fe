#include "search/profile_batch.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

#include "core/parallel.h"

namespace kernelpro::search {

std::string CandidateStepKey(std::int64_t candidate_id) {
  return "candidate:" + std::to_string(candidate_id);
}

Result<std::vector<std::int64_t>> CandidatesToProfile(Journal& journal, int iteration,
                                                      const std::vector<NodeInfo>& children) {
  std::vector<std::int64_t> ids;
  for (const NodeInfo& c : children) {
    if (c.status != eval::EvalStatus::kCorrect || c.candidate_id == 0) continue;
    if (std::find(ids.begin(), ids.end(), c.candidate_id) != ids.end()) continue;
    auto done = journal.Done(journal.Key(iteration, "profile", CandidateStepKey(c.candidate_id)));
    if (!done.ok()) return done.status();
    if (*done) continue;
    auto earlier = journal.store().LatestProfileAnalysis(c.candidate_id);
    if (!earlier.ok()) return earlier.status();
    if (!*earlier) ids.push_back(c.candidate_id);
  }
  return ids;
}

std::map<std::int64_t, Result<profile::Metrics>> ProfileAtOnce(
    CandidateEvaluator& evaluator, const std::string& problem, const store::RunLayout& layout,
    const std::vector<NodeInfo>& children, const std::vector<std::int64_t>& ids, int gpus) {
  std::vector<std::string> files;
  for (std::int64_t id : ids) {
    auto child = std::find_if(children.begin(), children.end(),
                              [&](const NodeInfo& c) { return c.candidate_id == id; });
    files.push_back(layout.Path(child->file));
  }
  std::vector<std::optional<Result<profile::Metrics>>> results(ids.size());
  ParallelFor(ids.size(), static_cast<std::size_t>(gpus), [&](std::size_t i) {
    try {
      results[i].emplace(evaluator.Profile(problem, files[i]));
    } catch (const std::exception& e) {
      results[i].emplace(Status::Internal(std::string("profile: ") + e.what()));
    }
  });
  std::map<std::int64_t, Result<profile::Metrics>> fetched;
  for (std::size_t i = 0; i < ids.size(); ++i) fetched.emplace(ids[i], std::move(*results[i]));
  return fetched;
}

}  // namespace kernelpro::search
