// A finished (or stopped) run read back from its run store, as the reports need it: what
// `kernelpro report RUN_DIR` renders without running anything, and what `optimize` adds to its
// own report input (the profiled kernels' DRAM traffic for the roofline figure).
//
// What the store does not keep is left out: the process's notes, and the driver and toolchain the
// worker reported, unless the run directory's best.py names them in its header (the device name
// comes from the Stage-1 analysis).
//
// Not thread-safe beyond what store::RunStore is; a StoredRun is read by one thread.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "report/run_report.h"
#include "search/node_info.h"
#include "search/tree.h"
#include "store/run_store.h"

namespace kernelpro::report {

// A report input over its own tree and node facts (the input points at them, so a StoredRun is
// handed out behind a unique_ptr and never moved).
struct StoredRun {
  search::Tree tree;
  std::map<int, search::NodeInfo> nodes;
  RunReportInput input;
  StoredRun() = default;
  StoredRun(const StoredRun&) = delete;
  StoredRun& operator=(const StoredRun&) = delete;
};

// Reads the one run `store` holds (as of its last recorded iteration). `run_dir` is where the run
// directory is now (it may have moved since the run began): the report's run directory.
Result<std::unique_ptr<StoredRun>> ReadStoredRun(store::RunStore& store,
                                                 const std::string& run_dir);

// By tree id: the DRAM bytes of each correct node's latest stored profile, where ncu counted them.
std::map<int, double> StoredDramBytes(store::RunStore& store,
                                      const std::map<int, search::NodeInfo>& nodes,
                                      const search::Tree& tree);

// By tree id: the energy proxy of each correct node's latest stored profile
// (profile/energy_proxy.h; a profile without a counter gives an estimate naming what is missing).
// For the report of a run made with --energy measure|aware.
std::map<int, profile::EnergyProxyEstimate> StoredEnergyProxies(
    store::RunStore& store, const std::map<int, search::NodeInfo>& nodes, const search::Tree& tree,
    const profile::EnergyProxyOptions& options = {});

// By iteration: the programmer's tool calls of the one run `store` holds (RunReportInput's
// tool_calls); empty when it made none or they cannot be read.
std::map<int, std::vector<agents::ProgrammerToolCall>> StoredToolCalls(store::RunStore& store);

}  // namespace kernelpro::report
