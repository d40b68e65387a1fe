// NVML's energy per call for the fastest kernels of a run, measured once after the search
// (`optimize --energy measure|aware`; eval/energy.h does the measuring, docs/energy.md says how).
//
// The search itself ranks by the counter-based proxy (profile/energy_proxy.h), which is cheap and
// deterministic; NVML's millijoules cost minutes per kernel, so they are measured for the
// RunConfig::energy_kernels fastest correct kernels only, once the search has stopped, with the
// reference measured in the same session. The measurement is a journal step (iteration 0, step
// "energy", key naming the nodes): a resumed run or `kernelpro report` shows the same numbers, and
// a run resumed after more iterations measures its new best kernels again.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "search/node_info.h"
#include "search/tree.h"
#include "store/run_store.h"

namespace kernelpro::search {

inline constexpr char kEnergyStep[] = "energy";

struct MeasuredEnergy {
  std::vector<int> nodes;  // tree ids, in the order of the step's candidate arms
  Json step;               // the energy step's result, every window (eval::EnergyReportFromStep)
};

Json ToJson(const MeasuredEnergy& measured);
Result<MeasuredEnergy> MeasuredEnergyFromJson(const Json& json);

// The `count` best correct nodes (BetterSolution: fastest first), one per candidate, skipping
// nodes without a candidate file.
std::vector<int> EnergyNodes(const Tree& tree, const std::map<int, NodeInfo>& infos, int count);

// The journal key of a measurement of these nodes: "n3,n7".
std::string EnergyStepKey(const std::vector<int>& nodes);

// The latest measurement journaled for the run (any nodes); nullopt when none was made.
Result<std::optional<MeasuredEnergy>> LatestMeasuredEnergy(store::RunStore& store,
                                                           std::int64_t run_id);

}  // namespace kernelpro::search
