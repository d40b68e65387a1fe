#include "search/generate_step.h"

#include <utility>

#include "agents/problem_source.h"

namespace kernelpro::search {

Result<agents::PromptContext> IterationPromptContext(const RunConfig& config,
                                                     const Selection& selection, const Tree& tree,
                                                     const std::map<int, NodeInfo>& infos,
                                                     store::RunStore& store,
                                                     const roofline::ReferenceAnalysis* stage1) {
  auto problem = agents::ReadProblemSource(config.problem);
  if (!problem.ok()) return problem.status();
  agents::PromptContext context;
  context.mode = selection.mode;
  context.device = config.device;
  context.problem = std::move(*problem);
  context.gpu = config.gpu;
  // Several temperatures: one request per candidate, each prompt asking for one.
  const bool per_candidate = config.temperatures.size() > 1;
  context.num_candidates = per_candidate ? 1 : config.candidates;
  context.cutlass_dir = config.cutlass_dir;
  context.energy_preferences = config.energy == EnergyMode::kAware;
  if (stage1 != nullptr) context.stage1 = roofline::RenderStageOneBrief(*stage1);
  const std::optional<int> parent = selection.parent();
  if (!parent) return context;
  auto found = infos.find(*parent);
  const NodeInfo info = found == infos.end() ? NodeInfo() : found->second;
  if (info.candidate_id != 0) {
    auto candidate = store.GetCandidate(info.candidate_id);
    if (!candidate.ok()) return candidate.status();
    context.parent_code = candidate->source;
  } else {
    context.parent_code =
        "# (no code: the previous reply held no usable candidate; write one from scratch)\n";
  }
  if (selection.mode == agents::PromptMode::kDebug) {
    context.feedback = info.errors.empty() ? "the candidate failed" : info.errors;
  } else {
    context.feedback = info.feedback;
    const Node& node = tree.node(*parent);
    if (node.speedup) context.parent_speedup = node.speedup->estimate;
  }
  return context;
}

Result<Json> StoreGeneratedReply(store::RunStore& store, const store::RunLayout& layout,
                                 std::int64_t run_id, int iteration, GeneratedReply& reply) {
  Json payload = reply.about;
  payload["children"] = Json::array();
  for (PlannedChild& child : reply.children) {
    if (!child.code.empty()) {
      auto added = store.AddCandidate(run_id, iteration, child.info.strategy, child.code);
      if (!added.ok()) return added.status();
      child.info.candidate_id = added->id;
      child.info.file = store::RunLayout::CandidateFile(added->id);
      Status written = WriteFileAtomically(layout.Path(child.info.file), child.code);
      if (!written.ok()) return written;
    }
    payload["children"].push_back(CandidateJson(child.info));
  }
  return payload;
}

std::vector<NodeInfo> GeneratedChildren(const Json& payload, int iteration) {
  std::vector<NodeInfo> children;
  for (const Json& j : JsonGet<Json>(payload, "children", Json::array())) {
    children.push_back(NodeInfoFromJson(j));
    children.back().iteration = iteration;
  }
  return children;
}

}  // namespace kernelpro::search
