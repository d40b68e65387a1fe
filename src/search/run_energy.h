// Energy in a run (--energy measure|aware; docs/energy.md), kept out of the algorithm's file: the
// energy proxy of each correct child after the profile step, and NVML's measurement of the fastest
// kernels once the search has stopped (search/measured_energy.h). Neither ever fails the run: what
// cannot be known or measured becomes a note of the run.
//
// Thread-safety: the orchestrator's thread only.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "roofline/reference_analysis.h"
#include "search/journal.h"
#include "search/measured_energy.h"
#include "search/node_info.h"
#include "search/run_config.h"
#include "search/tree.h"
#include "store/run_store.h"

namespace kernelpro::search {

// An NVML meter: measures the reference and these candidate files (absolute paths, fastest first)
// in config.energy_windows windows of config.energy_window_s, and returns the energy step's result
// (eval/energy.h).
using EnergyMeter = std::function<Result<Json>(const std::vector<std::string>& candidates,
                                               const RunConfig& config)>;

// Says a note of the run (the orchestrator keeps each once, for the summary and the report).
using NoteSink = std::function<void(const std::string& note)>;

// Each correct child's energy proxy from its stored profile, and its energy reduction over the
// reference's (Stage 1's `stage1`). Reads the store only, so a resumed or replayed iteration gets
// the same numbers. A reference without a proxy is a note, and the children then get no reduction.
// `options`: the run's --energy-proxy (its tools' energy_proxy).
void AttachEnergyProxies(store::RunStore& store,
                         const std::optional<roofline::ReferenceAnalysis>& stage1,
                         std::vector<NodeInfo>& children, const NoteSink& note,
                         const profile::EnergyProxyOptions& options = {});

// After the search, with energy measure|aware and RunConfig::energy_kernels > 0: NVML's energy per
// call of the fastest correct kernels, journaled as step "energy" of iteration 0 (keyed by the
// nodes), or the stored measurement of the same kernels. nullopt when nothing was measured: no
// correct kernel, or a measurement that could not be made (then a note "energy (NVML): ...", which
// `note_and_log` also logs). `meter` null: not measured, a note says so. `log` tells what is being
// measured before the minutes it takes.
std::optional<MeasuredEnergy> MeasureBestEnergy(Journal& journal, const Tree& tree,
                                                const std::map<int, NodeInfo>& infos,
                                                const RunConfig& config, const EnergyMeter& meter,
                                                const NoteSink& note_and_log,
                                                const std::function<void(const std::string&)>& log);

}  // namespace kernelpro::search
