#include "search/node_info.h"

#include <algorithm>
#include <cmath>

#include "agents/prompt_builder.h"

namespace kernelpro::search {
namespace {

std::optional<EvalStatus> ParseEvalStatus(const std::string& text) {
  for (EvalStatus s : {EvalStatus::kCompileError, EvalStatus::kRuntimeError, EvalStatus::kTimeout,
                       EvalStatus::kIncorrect, EvalStatus::kCorrect}) {
    if (text == EvalStatusName(s)) return s;
  }
  return std::nullopt;
}

// The largest absolute error among the compare step's rows, for greedy's repair priority.
std::optional<double> ErrorMagnitude(const Json& correctness) {
  std::optional<double> worst;
  if (!correctness.is_array()) return worst;
  for (const Json& row : correctness) {
    auto v = JsonNumber(row, "max_abs_err");
    if (v && std::isfinite(*v)) worst = std::max(worst.value_or(*v), *v);
  }
  return worst;
}

// A failed candidate's errors as the debug prompt shows them.
std::string FailureText(EvalStatus status, const std::string& message,
                        const std::string& diagnostics) {
  std::string text = std::string(EvalStatusName(status)) + ": " + message;
  if (!diagnostics.empty()) text += "\n" + diagnostics;
  return agents::TrimBuildErrors(text, 6000);
}

}  // namespace

Json CandidateJson(const NodeInfo& n) {
  return Json{{"candidate_id", n.candidate_id},
              {"strategy", n.strategy},
              {"file", n.file},
              {"rejected", n.rejected},
              {"nothing", n.nothing}};
}

Json ToJson(int tree_id, const NodeInfo& n) {
  Json j = CandidateJson(n);
  j["tree_id"] = tree_id;
  j["node_id"] = n.node_id;
  j["iteration"] = n.iteration;
  j["status"] = EvalStatusName(n.status);
  j["speedup"] = IntervalJson(n.speedup);
  j["error_magnitude"] = NumberOrNull(n.error_magnitude);
  j["candidate_ms"] = NumberOrNull(n.candidate_ms);
  j["errors"] = n.errors;
  j["feedback"] = n.feedback;
  j["tools_fired"] = n.tools_fired;
  j["verdict"] = n.verdict;
  return j;
}

NodeInfo NodeInfoFromJson(const Json& j) {
  NodeInfo n;
  n.node_id = JsonGet<std::int64_t>(j, "node_id", 0);
  n.candidate_id = JsonGet<std::int64_t>(j, "candidate_id", 0);
  n.iteration = JsonGet<int>(j, "iteration", 0);
  n.strategy = JsonGet<std::string>(j, "strategy", "");
  n.file = JsonGet<std::string>(j, "file", "");
  n.rejected = JsonGet<std::string>(j, "rejected", "");
  n.nothing = JsonGet<std::string>(j, "nothing", "");
  ApplyVerdict(j, n);
  n.feedback = JsonGet<std::string>(j, "feedback", "");
  n.tools_fired = JsonGet<std::vector<std::string>>(j, "tools_fired", {});
  n.verdict = JsonGet<std::string>(j, "verdict", "");
  return n;
}

Json VerdictPayload(const store::EvaluationRecord& e, std::int64_t evaluation_id) {
  const EvalStatus status = ParseEvalStatus(e.status).value_or(EvalStatus::kRuntimeError);
  Json payload{{"status", e.status},
               {"speedup", nullptr},
               {"error_magnitude", nullptr},
               {"candidate_ms", NumberOrNull(e.candidate_ms)},
               {"errors", ""},
               {"evaluation_id", evaluation_id}};
  if (status == EvalStatus::kCorrect && e.speedup) {
    payload["speedup"] = IntervalJson(RatioInterval{
        *e.speedup, e.speedup_lo.value_or(*e.speedup), e.speedup_hi.value_or(*e.speedup),
        JsonGet<double>(e.result, "speedup_confidence", 0.95)});
  }
  if (status != EvalStatus::kCorrect) {
    const Json build = JsonGet<Json>(e.result, "build", Json::object());
    payload["errors"] =
        FailureText(status, e.message, JsonGet<std::string>(build, "diagnostics", ""));
  }
  if (auto m = ErrorMagnitude(JsonGet<Json>(e.result, "correctness", Json::array()))) {
    payload["error_magnitude"] = *m;
  }
  return payload;
}

void ApplyVerdict(const Json& p, NodeInfo& n) {
  n.status =
      ParseEvalStatus(JsonGet<std::string>(p, "status", "")).value_or(EvalStatus::kRuntimeError);
  n.speedup = IntervalFromJson(JsonGet<Json>(p, "speedup", Json()));
  n.error_magnitude = JsonNumber(p, "error_magnitude");
  n.candidate_ms = JsonNumber(p, "candidate_ms");
  n.errors = JsonGet<std::string>(p, "errors", "");
}

store::EvaluationRecord EvaluationRow(std::int64_t candidate_id, const EvalResult& result) {
  store::EvaluationRecord e;
  e.candidate_id = candidate_id;
  e.status = EvalStatusName(result.status);
  e.message = result.message;
  if (result.speedup) {
    e.speedup = result.speedup->estimate;
    e.speedup_lo = result.speedup->low;
    e.speedup_hi = result.speedup->high;
  }
  if (result.reference_time) e.reference_ms = result.reference_time->summary.median;
  if (result.candidate_time) e.candidate_ms = result.candidate_time->summary.median;
  e.total_seconds = result.total_seconds;
  e.result = ToJson(result);
  return e;
}

Outcome ToOutcome(const NodeInfo& n) {
  Outcome o;
  o.candidate = n.candidate_id ? std::to_string(n.candidate_id) : "";
  o.status = n.status;
  o.speedup = n.speedup;
  o.error_magnitude = n.error_magnitude;
  return o;
}

store::NodeRecord NodeRow(std::int64_t run_id, std::int64_t parent_node_id, const Node& node,
                          const NodeInfo& info) {
  store::NodeRecord r;
  r.run_id = run_id;
  r.parent_id = parent_node_id;
  r.kind = NodeKindName(node.kind);
  r.mode = node.mode ? agents::ToString(*node.mode) : "";
  r.iteration = info.iteration;
  r.status = node.status ? EvalStatusName(*node.status) : "";
  r.reward = node.reward;
  if (node.speedup) {
    r.speedup = node.speedup->estimate;
    r.speedup_lo = node.speedup->low;
    r.speedup_hi = node.speedup->high;
  }
  r.visits = node.visits;
  r.total_reward = node.total_reward;
  r.terminal = node.terminal;
  if (info.candidate_id) r.candidate_id = info.candidate_id;
  return r;
}

}  // namespace kernelpro::search
