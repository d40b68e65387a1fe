#include "search/run_energy.h"

#include <filesystem>
#include <utility>

#include "core/text.h"
#include "profile/energy_proxy.h"

namespace kernelpro::search {

void AttachEnergyProxies(store::RunStore& store,
                         const std::optional<roofline::ReferenceAnalysis>& stage1,
                         std::vector<NodeInfo>& children, const NoteSink& note,
                         const profile::EnergyProxyOptions& options) {
  std::optional<double> reference;
  if (stage1) reference = roofline::ReferenceEnergyProxy(*stage1, options);
  if (!reference) {
    std::string why = "no ncu profile of the reference (Stage 1)";
    if (stage1 && !stage1->energy_proxy_missing.empty()) {
      why = "its ncu profile lacks " + Join(stage1->energy_proxy_missing, ", ");
    }
    note("energy: the reference's energy proxy is unknown (" + why +
         "): candidates' proxies are recorded without an energy reduction");
  }
  for (NodeInfo& child : children) {
    if (child.status != eval::EvalStatus::kCorrect || child.candidate_id == 0) continue;
    auto metrics = store.LatestMetrics(child.candidate_id);
    if (!metrics.ok() || !metrics->has_value()) continue;  // not profiled (cpu, --feedback none)
    const profile::EnergyProxyEstimate energy =
        profile::ComputeEnergyProxyFromJson((*metrics)->metrics, options);
    if (!energy.proxy) continue;
    child.energy_proxy_pj = energy.proxy->total_pj;
    if (reference) {
      child.energy_reduction = profile::EnergyReduction(*reference, *child.energy_proxy_pj);
    }
  }
}

std::optional<MeasuredEnergy> MeasureBestEnergy(
    Journal& journal, const Tree& tree, const std::map<int, NodeInfo>& infos,
    const RunConfig& config, const EnergyMeter& meter, const NoteSink& note_and_log,
    const std::function<void(const std::string&)>& log) {
  if (config.energy == EnergyMode::kOff || config.energy_kernels <= 0) return std::nullopt;
  const std::vector<int> nodes = EnergyNodes(tree, infos, config.energy_kernels);
  if (nodes.empty()) return std::nullopt;  // nothing correct, nothing to measure
  const store::StepKey key = journal.Key(0, kEnergyStep, EnergyStepKey(nodes));
  auto note = [&](const std::string& text) -> std::optional<MeasuredEnergy> {
    note_and_log("energy (NVML): " + text);
    return std::nullopt;
  };
  auto done = journal.Done(key);
  if (!done.ok()) return note("the journal could not be read: " + done.status().message());
  if (*done) {
    auto stored = MeasuredEnergyFromJson(**done);
    if (!stored.ok()) {
      return note("the stored measurement is unreadable: " + stored.status().message());
    }
    return std::move(*stored);
  }
  if (!meter) return note("not measured (this process has no NVML meter)");
  std::vector<std::string> files;
  std::string names;
  for (int id : nodes) {
    files.push_back((std::filesystem::path(config.run_dir) / infos.at(id).file).string());
    names += (names.empty() ? "n" : ", n") + std::to_string(id);
  }
  const double minutes =
      (1.0 + nodes.size()) * config.energy_windows * config.energy_window_s / 60.0;
  log("energy: measuring the reference and " + names + " with NVML (" +
      std::to_string(config.energy_windows) + " windows of " +
      FormatFixed(config.energy_window_s, 1) + " s each, about " + FormatFixed(minutes, 1) +
      " min plus warm-ups)");
  auto step = meter(files, config);
  if (!step.ok()) return note("not measured: " + step.status().message());
  MeasuredEnergy measured{nodes, std::move(*step)};
  auto recorded = journal.Record(key, [&]() -> Result<Json> { return ToJson(measured); });
  if (!recorded.ok()) {
    note("measured, but the run store did not take it: " + recorded.status().message());
  }
  return measured;
}

}  // namespace kernelpro::search
