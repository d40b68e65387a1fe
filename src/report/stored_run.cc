#include "report/stored_run.h"

#include <fstream>
#include <optional>

#include "core/text.h"
#include "report/charts.h"
#include "roofline/reference_analysis.h"
#include "search/journal.h"
#include "search/measured_energy.h"
#include "search/run_config.h"

namespace kernelpro::report {
namespace {

// "openai:gpt-4o", "replay:demo.jsonl": as optimize labels the model.
std::string LlmLabel(const llm::LlmConfig& c) {
  std::string label = c.provider + ":" + c.model;
  if (!c.base_url.empty()) label += "@" + c.base_url;
  return label;
}

// The stored status message is "REASON: message" for a finished run ("iterations: 4 iterations
// done"); the report shows the message.
std::string StopMessage(const store::RunRecord& run) {
  if (run.status == store::RunStatus::kFinished) {
    const size_t colon = run.status_message.find(": ");
    return colon == std::string::npos ? run.status_message : run.status_message.substr(colon + 2);
  }
  if (run.status == store::RunStatus::kFailed) {
    return "the run stopped: " + run.status_message + " (kernelpro resume continues it)";
  }
  return "not finished (the run is still going, or was killed; kernelpro resume continues it)";
}

// The driver and toolchain are not in the store, but the best.py an earlier report wrote names
// them in its header ("# driver:    580.159.04"): kept, so that rendering a run again in place
// does not forget them.
void EnvironmentFromBestKernel(const std::string& path, RunEnvironment& env) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line) && line.rfind("#", 0) == 0) {
    auto value = [&](const std::string& key) -> std::optional<std::string> {
      if (line.rfind(key, 0) != 0) return std::nullopt;
      std::string text(Trim(std::string_view(line).substr(key.size())));
      if (text.empty() || text == "unknown") return std::nullopt;
      return text;
    };
    if (auto driver = value("# driver:")) env.driver = *driver;
    if (auto toolchain = value("# toolchain:")) env.toolchain = *toolchain;
  }
}

}  // namespace

std::map<int, double> StoredDramBytes(store::RunStore& store,
                                      const std::map<int, search::NodeInfo>& nodes,
                                      const search::Tree& tree) {
  std::map<int, double> bytes;
  for (const auto& [id, info] : nodes) {
    if (!tree.Contains(id) || !tree.node(id).correct() || info.candidate_id == 0) continue;
    auto metrics = store.LatestMetrics(info.candidate_id);
    if (!metrics.ok() || !metrics->has_value()) continue;
    if (auto dram = DramBytesFromMetrics((*metrics)->metrics)) bytes[id] = *dram;
  }
  return bytes;
}

std::map<int, profile::EnergyProxyEstimate> StoredEnergyProxies(
    store::RunStore& store, const std::map<int, search::NodeInfo>& nodes, const search::Tree& tree,
    const profile::EnergyProxyOptions& options) {
  std::map<int, profile::EnergyProxyEstimate> energy;
  for (const auto& [id, info] : nodes) {
    if (!tree.Contains(id) || !tree.node(id).correct() || info.candidate_id == 0) continue;
    auto metrics = store.LatestMetrics(info.candidate_id);
    if (!metrics.ok() || !metrics->has_value()) continue;
    energy[id] = profile::ComputeEnergyProxyFromJson((*metrics)->metrics, options);
  }
  return energy;
}

Result<std::unique_ptr<StoredRun>> ReadStoredRun(store::RunStore& store,
                                                 const std::string& run_dir) {
  auto runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  if (runs->empty()) return Status::NotFound("the run store holds no run");
  const store::RunRecord& run = runs->front();
  auto config = search::StoredRunConfig(store);
  if (!config.ok()) return config.status();
  auto stored_nodes = store.ListNodes(run.id);
  if (!stored_nodes.ok()) return stored_nodes.status();
  std::int64_t root_node_id = 0;
  for (const store::NodeRecord& n : *stored_nodes) {
    if (n.kind == "root") root_node_id = n.id;
  }
  auto last = store.LastJournaledIteration(run.id);
  if (!last.ok()) return last.status();
  search::Journal journal(store, run.id);
  auto recorded = search::ReadRecordedSearch(journal, last->value_or(0), root_node_id);
  if (!recorded.ok()) return recorded.status();

  auto out = std::make_unique<StoredRun>();
  out->tree = std::move(recorded->tree);
  out->nodes = std::move(recorded->infos);
  RunReportInput& in = out->input;
  in.config = std::move(*config);
  in.config.run_dir = run_dir;
  in.tree = &out->tree;
  in.nodes = &out->nodes;
  if (run.reference_analysis) {
    auto stage1 = roofline::ReferenceAnalysisFromJson(*run.reference_analysis);
    if (stage1.ok()) in.stage1 = std::move(*stage1);
  }
  in.environment.device = in.config.device;
  if (in.stage1) in.environment.device_name = in.stage1->device_name;
  EnvironmentFromBestKernel(store::RunLayout(run_dir).best_kernel(), in.environment);
  in.llm = LlmLabel(in.config.llm);

  search::OptimizeSummary& summary = in.summary;
  summary.stop_message = StopMessage(run);
  summary.iterations_done = out->tree.expansions();
  summary.best = out->tree.BestNode();
  if (auto totals = store.LlmTotalsForRun(run.id); totals.ok()) {
    summary.cost_usd = totals->cost_usd;
    summary.exchanges = totals->exchanges;
    // An exchange recorded without a price makes the whole cost unknown, as the live run said.
    in.cost_known = totals->cost_complete;
  }
  summary.notes.push_back(
      "this report was rendered again from the run store (kernelpro report); "
      "the notes of the process that ran the search are not stored");
  if (summary.best) {
    auto it = out->nodes.find(*summary.best);
    if (it != out->nodes.end() && it->second.candidate_id > 0) {
      auto candidate = store.GetCandidate(it->second.candidate_id);
      if (candidate.ok()) in.best_source = candidate->source;
    }
  }
  in.dram_bytes = StoredDramBytes(store, out->nodes, out->tree);
  if (in.config.energy != search::EnergyMode::kOff) {
    in.energy = StoredEnergyProxies(store, out->nodes, out->tree,
                                    profile::EnergyProxyOptionsNamed(in.config.tools.energy_proxy));
    if (auto measured = search::LatestMeasuredEnergy(store, run.id); measured.ok()) {
      summary.energy = std::move(*measured);
    } else {
      summary.notes.push_back("energy (NVML): the stored measurement could not be read: " +
                              measured.status().message());
    }
  }
  in.tool_calls = StoredToolCalls(store);
  return out;
}

std::map<int, std::vector<agents::ProgrammerToolCall>> StoredToolCalls(store::RunStore& store) {
  auto runs = store.ListRuns();
  if (!runs.ok() || runs->empty()) return {};
  auto last = store.LastJournaledIteration(runs->front().id);
  if (!last.ok()) return {};
  search::Journal journal(store, runs->front().id);
  auto calls = search::ReadProgrammerToolCalls(journal, last->value_or(0));
  return calls.ok() ? std::move(*calls) : std::map<int, std::vector<agents::ProgrammerToolCall>>{};
}

}  // namespace kernelpro::report
