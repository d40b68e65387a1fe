#include "search/measured_energy.h"

#include <algorithm>
#include <set>

namespace kernelpro::search {

Json ToJson(const MeasuredEnergy& measured) {
  return {{"nodes", measured.nodes}, {"step", measured.step}};
}

Result<MeasuredEnergy> MeasuredEnergyFromJson(const Json& json) {
  if (!json.is_object() || !json.contains("nodes") || !json["nodes"].is_array() ||
      !json.contains("step") || !json["step"].is_object()) {
    return Status::InvalidArgument("the energy step's payload lacks nodes or step");
  }
  MeasuredEnergy out;
  for (const Json& id : json["nodes"]) {
    if (!id.is_number_integer()) return Status::InvalidArgument("energy step: a node is no id");
    out.nodes.push_back(id.get<int>());
  }
  out.step = json["step"];
  return out;
}

std::vector<int> EnergyNodes(const Tree& tree, const std::map<int, NodeInfo>& infos, int count) {
  std::vector<int> correct;
  for (int id = 0; id < tree.size(); ++id) {
    if (!tree.node(id).correct()) continue;
    auto info = infos.find(id);
    if (info == infos.end() || info->second.file.empty()) continue;
    correct.push_back(id);
  }
  std::sort(correct.begin(), correct.end(),
            [&](int a, int b) { return BetterSolution(tree.node(a), tree.node(b)); });
  std::vector<int> chosen;
  std::set<std::int64_t> candidates;
  for (int id : correct) {
    if (static_cast<int>(chosen.size()) >= count) break;
    if (!candidates.insert(infos.at(id).candidate_id).second) continue;  // the same source again
    chosen.push_back(id);
  }
  return chosen;
}

std::string EnergyStepKey(const std::vector<int>& nodes) {
  std::string key;
  for (int id : nodes) key += (key.empty() ? "n" : ",n") + std::to_string(id);
  return key;
}

Result<std::optional<MeasuredEnergy>> LatestMeasuredEnergy(store::RunStore& store,
                                                           std::int64_t run_id) {
  auto steps = store.StepsForIteration(run_id, 0);
  if (!steps.ok()) return steps.status();
  const store::StepRecord* latest = nullptr;
  for (const store::StepRecord& s : *steps) {
    if (s.key.step != kEnergyStep || s.state != store::StepState::kDone) continue;
    if (!latest || s.done_ms.value_or(0) >= latest->done_ms.value_or(0)) latest = &s;
  }
  if (!latest) return std::optional<MeasuredEnergy>();
  auto measured = MeasuredEnergyFromJson(latest->payload);
  if (!measured.ok()) return measured.status();
  return std::optional<MeasuredEnergy>(std::move(*measured));
}

}  // namespace kernelpro::search
