#include "search/node_info.h"

#include <algorithm>
#include <cmath>

#include "agents/prompt_builder.h"
#include "core/text.h"
#include "search/journal.h"

namespace kernelpro::search {
namespace {

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
std::string FailureText(eval::EvalStatus status, const std::string& message,
                        const std::string& diagnostics) {
  std::string text = std::string(eval::EvalStatusName(status)) + ": " + message;
  if (!diagnostics.empty()) text += "\n" + diagnostics;
  return agents::TrimBuildErrors(text, 6000);
}

// Whether a rejected candidate is an attempt worth a node (a check that failed), rather than
// bookkeeping of the reply (a duplicate, one beyond the N asked for, an empty entry).
bool RejectionIsAttempt(const std::string& reason) {
  return !reason.starts_with("duplicate") && !reason.starts_with("beyond") && reason != "no code";
}

}  // namespace

std::vector<PlannedChild> PlanChildren(const agents::ProgrammerResult& reply, int max_children) {
  std::vector<PlannedChild> children;
  auto plan = [&](std::string strategy, std::string code, std::string rejected,
                  std::string nothing) {
    PlannedChild child;
    child.info.strategy = std::move(strategy);
    child.info.rejected = std::move(rejected);
    child.info.nothing = std::move(nothing);
    child.code = std::move(code);
    children.push_back(std::move(child));
  };
  for (const agents::Candidate& c : reply.candidates) plan(c.strategy, c.code, "", "");
  // Rejected attempts fill the places the checked candidates left, so that what the checks found
  // (a syntax error, a broken CUTLASS constraint) reaches a debug prompt like a compiler's error.
  for (const agents::RejectedCandidate& r : reply.rejected) {
    if (static_cast<int>(children.size()) >= max_children) break;
    if (RejectionIsAttempt(r.reason)) plan(r.strategy, r.code, r.reason, "");
  }
  if (children.empty()) {
    plan(
        "", "", "",
        "no candidate: " + (reply.error ? reply.error->ToString() : "the reply held no candidate"));
  }
  return children;
}

Json ReplySummary(const agents::ProgrammerResult& reply) {
  Json rejected = Json::array();
  for (const agents::RejectedCandidate& r : reply.rejected) {
    rejected.push_back({{"strategy", r.strategy}, {"reason", r.reason}});
  }
  Json summary{{"rejected", rejected},
               {"error", reply.error ? reply.error->ToString() : ""},
               {"notes", reply.notes}};
  // Only a reply that was offered tools says so: earlier payloads keep their exact form.
  if (reply.tools_offered || !reply.tool_calls.empty()) {
    summary["tools_offered"] = reply.tools_offered;
    summary["tool_calls"] = ToolCallsJson(reply.tool_calls);
  }
  return summary;
}

Json ToolCallsJson(const std::vector<agents::ProgrammerToolCall>& calls) {
  Json list = Json::array();
  for (const agents::ProgrammerToolCall& call : calls) {
    list.push_back({{"name", call.name},
                    {"arguments", call.arguments},
                    {"result", ShortenText(call.result, kStoredToolResultBytes)},
                    {"is_error", call.is_error}});
  }
  return list;
}

std::vector<agents::ProgrammerToolCall> ToolCallsFromJson(const Json& json) {
  std::vector<agents::ProgrammerToolCall> calls;
  if (!json.is_array()) return calls;
  for (const Json& j : json) {
    if (!j.is_object()) continue;
    calls.push_back({JsonGet<std::string>(j, "name", ""), JsonGet<Json>(j, "arguments", Json()),
                     JsonGet<std::string>(j, "result", ""), JsonGet<bool>(j, "is_error", false)});
  }
  return calls;
}

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
  j["status"] = eval::EvalStatusName(n.status);
  j["speedup"] = IntervalJson(n.speedup);
  j["error_magnitude"] = NumberOrNull(n.error_magnitude);
  j["candidate_ms"] = NumberOrNull(n.candidate_ms);
  if (n.sol_fraction) j["sol_fraction"] = *n.sol_fraction;
  j["noisy_timing"] = n.noisy_timing;
  if (!n.shapes.empty()) j["shapes"] = n.shapes;  // payloads without shape checks stay as they were
  j["errors"] = n.errors;
  j["feedback"] = n.feedback;
  j["tools_fired"] = n.tools_fired;
  j["verdict"] = n.verdict;
  // Only when measured: the payloads of runs without --energy stay as they were.
  if (n.energy_proxy_pj) j["energy_proxy_pj"] = *n.energy_proxy_pj;
  if (n.energy_reduction) j["energy_reduction"] = *n.energy_reduction;
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
  ApplyProfile(j, n);
  n.verdict = JsonGet<std::string>(j, "verdict", "");
  n.energy_proxy_pj = JsonNumber(j, "energy_proxy_pj");
  n.energy_reduction = JsonNumber(j, "energy_reduction");
  return n;
}

Json VerdictPayload(const store::EvaluationRecord& e, std::int64_t evaluation_id) {
  const eval::EvalStatus status =
      eval::ParseEvalStatus(e.status).value_or(eval::EvalStatus::kRuntimeError);
  Json payload{{"status", e.status},
               {"speedup", nullptr},
               {"error_magnitude", nullptr},
               {"candidate_ms", NumberOrNull(e.candidate_ms)},
               {"errors", ""},
               {"evaluation_id", evaluation_id}};
  if (status == eval::EvalStatus::kCorrect && e.speedup) {
    const RatioInterval interval{*e.speedup, e.speedup_lo.value_or(*e.speedup),
                                 e.speedup_hi.value_or(*e.speedup),
                                 JsonGet<double>(e.result, "speedup_confidence", 0.95)};
    payload["speedup"] = IntervalJson(interval);
    // From the stored result, so that runs recorded before the rule existed read the same.
    bool noisy = NoisyInterval(interval);
    for (const char* side : {"reference_timing", "candidate_timing"}) {
      const Json timing = JsonGet<Json>(e.result, side, Json());
      SampleSummary summary;
      summary.relative_spread = JsonGet<double>(timing, "relative_spread", 0.0);
      noisy = noisy || NoisySpread(summary);
    }
    payload["noisy_timing"] = noisy;
    if (auto sol = JsonNumber(e.result, "sol_fraction")) payload["sol_fraction"] = *sol;
    const std::string shapes = eval::ShapeGeneralityText(JsonGet<Json>(e.result, "shapes", Json()));
    if (!shapes.empty()) payload["shapes"] = shapes;
  }
  if (status != eval::EvalStatus::kCorrect) {
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
  n.status = eval::ParseEvalStatus(JsonGet<std::string>(p, "status", ""))
                 .value_or(eval::EvalStatus::kRuntimeError);
  n.speedup = IntervalFromJson(JsonGet<Json>(p, "speedup", Json()));
  n.error_magnitude = JsonNumber(p, "error_magnitude");
  n.candidate_ms = JsonNumber(p, "candidate_ms");
  n.noisy_timing = JsonGet<bool>(p, "noisy_timing", false);
  n.sol_fraction = JsonNumber(p, "sol_fraction");
  n.shapes = JsonGet<std::string>(p, "shapes", "");
  n.errors = JsonGet<std::string>(p, "errors", "");
}

void ApplyProfile(const Json& payload, NodeInfo& info) {
  info.feedback = JsonGet<std::string>(payload, "feedback", "");
  info.tools_fired = JsonGet<std::vector<std::string>>(payload, "tools_fired", {});
}

store::EvaluationRecord EvaluationRow(std::int64_t candidate_id, const eval::EvalResult& result) {
  store::EvaluationRecord e;
  e.candidate_id = candidate_id;
  e.status = eval::EvalStatusName(result.status);
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

Result<std::optional<Json>> ReusedVerdictPayload(store::RunStore& store,
                                                 std::int64_t candidate_id) {
  auto earlier = store.LatestEvaluation(candidate_id);
  if (!earlier.ok()) return earlier.status();
  if (!*earlier) return std::optional<Json>();
  Json payload = VerdictPayload(**earlier, (*earlier)->id);
  payload["reused"] = true;
  return std::optional<Json>(std::move(payload));
}

CandidateOutcome ToOutcome(const NodeInfo& n) {
  CandidateOutcome o;
  o.candidate = n.candidate_id ? std::to_string(n.candidate_id) : "";
  o.status = n.status;
  o.speedup = n.speedup;
  o.error_magnitude = n.error_magnitude;
  o.noisy_timing = n.noisy_timing;
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
  r.status = node.status ? eval::EvalStatusName(*node.status) : "";
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

Status StoreTreeNodes(store::RunStore& store, std::int64_t run_id, const Tree& tree, int first_new,
                      std::map<int, NodeInfo>& infos) {
  for (int id = first_new; id < tree.size(); ++id) {
    const Node& node = tree.node(id);
    auto node_id = store.AddNode(NodeRow(run_id, infos[node.parent].node_id, node, infos[id]));
    if (!node_id.ok()) return node_id.status();
    infos[id].node_id = *node_id;
  }
  // Backpropagation and terminal marking changed the statistics of the path above.
  for (int id = 0; id < first_new; ++id) {
    const Node& node = tree.node(id);
    auto stored = store.GetNode(infos[id].node_id);
    if (!stored.ok()) return stored.status();
    store::NodeRecord r = *stored;
    if (r.visits == node.visits && r.total_reward == node.total_reward &&
        r.terminal == node.terminal) {
      continue;
    }
    r.visits = node.visits;
    r.total_reward = node.total_reward;
    r.terminal = node.terminal;
    if (Status s = store.UpdateNode(r); !s.ok()) return s;
  }
  return Status::Ok();
}

agents::IterationRecord IterationSummary(store::RunStore& store, const Tree& tree,
                                         const std::map<int, NodeInfo>& infos, int first_new,
                                         agents::PromptMode mode,
                                         const std::vector<std::string>& verdicts) {
  agents::IterationRecord r;
  auto source = [&](const NodeInfo& info) {
    if (info.candidate_id == 0) return std::string();
    auto candidate = store.GetCandidate(info.candidate_id);
    return candidate.ok() ? candidate->source : std::string();
  };
  int best = first_new;
  for (int id = first_new; id < tree.size(); ++id) {
    if (BetterSolution(tree.node(id), tree.node(best))) best = id;
    const NodeInfo& info = infos.at(id);
    const Node& node = tree.node(id);
    if (!info.strategy.empty()) r.strategy += (r.strategy.empty() ? "" : "; ") + info.strategy;
    const std::size_t k = static_cast<std::size_t>(id - first_new);
    const std::string verdict = k < verdicts.size() ? verdicts[k] : "";
    r.outcome += (r.outcome.empty() ? "" : ", ") + verdict;
    agents::ChildRecord child;
    child.name = "n" + std::to_string(id);
    child.strategy = info.strategy;
    child.code = source(info);
    child.verdict = verdict;
    if (node.correct() && node.speedup) child.speedup = node.speedup->estimate;
    child.feedback = node.correct() ? info.feedback : info.errors;
    if (child.feedback.empty() && info.candidate_id == 0) child.feedback = info.nothing;
    r.children.push_back(std::move(child));
  }
  const NodeInfo& info = infos.at(best);
  const Node& node = tree.node(best);
  r.iteration = info.iteration;
  r.mode = agents::ToString(mode);
  r.approach = r.children[static_cast<std::size_t>(best - first_new)].code;  // read once, above
  if (node.correct() && node.speedup) r.speedup = node.speedup->estimate;
  r.feedback_excerpt = node.correct() ? info.feedback : info.errors;
  r.tool_calls = info.tools_fired;
  return r;
}

Result<std::map<int, std::vector<agents::ProgrammerToolCall>>> ReadProgrammerToolCalls(
    Journal& journal, int last_iteration) {
  std::map<int, std::vector<agents::ProgrammerToolCall>> calls;
  for (int it = 1; it <= last_iteration; ++it) {
    auto payload = journal.Done(journal.Key(it, "generate"));
    if (!payload.ok()) return payload.status();
    if (!*payload) continue;
    auto stored = ToolCallsFromJson(JsonGet<Json>(**payload, "tool_calls", Json::array()));
    if (!stored.empty()) calls[it] = std::move(stored);
  }
  return calls;
}

Result<RecordedSearch> ReadRecordedSearch(Journal& journal, int last_iteration,
                                          std::int64_t root_node_id) {
  RecordedSearch search;
  search.infos[Tree::kRootId].node_id = root_node_id;
  std::optional<Json> last_tree;
  for (int it = 1; it <= last_iteration; ++it) {
    auto payload = journal.Done(journal.Key(it, "record"));
    if (!payload.ok()) return payload.status();
    if (!*payload) continue;
    last_tree = JsonGet<Json>(**payload, "tree", Json());
    for (const Json& j : JsonGet<Json>(**payload, "attached", Json::array())) {
      search.infos[JsonGet<int>(j, "tree_id", -1)] = NodeInfoFromJson(j);
    }
  }
  if (last_tree) {
    auto parsed = TreeFromJson(*last_tree);
    if (!parsed.ok()) {
      return Status::Internal("the stored search tree: " + parsed.status().message());
    }
    search.tree = std::move(*parsed);
  }
  return search;
}

}  // namespace kernelpro::search
