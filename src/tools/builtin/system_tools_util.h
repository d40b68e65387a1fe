// Small helpers shared by the system tools (system_tools.h): metric names and text pieces.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tools/tool.h"

namespace kernelpro::tools::system_tools {

// ncu names the tools read.
inline constexpr const char* kSmThroughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMemThroughput =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kLongScoreboard =
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct";
inline constexpr const char* kShortScoreboard =
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct";
inline constexpr const char* kMioThrottle =
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct";
inline constexpr const char* kLgThrottle =
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct";
inline constexpr const char* kBarrierStall = "smsp__warp_issue_stalled_barrier_per_warp_active.pct";
inline constexpr const char* kLocalLdSectors = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum";
inline constexpr const char* kLocalStSectors = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum";
inline constexpr const char* kGlobalLdSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kGlobalStSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char* kGlobalLdRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kGlobalStRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";

// Appends an observed metric, reading its unit from the set when `unit` is empty.
inline void Observe(ToolOutput& out, const MetricSet& m, const std::string& name,
                    std::string unit = "") {
  if (!m.Has(name)) return;
  out.observed.push_back({name, m.Get(name), unit.empty() ? m.Unit(name) : std::move(unit)});
}
inline void ObserveValue(ToolOutput& out, std::string name, double value, std::string unit) {
  out.observed.push_back({std::move(name), value, std::move(unit)});
}

// "42.1 %" from a share in 0..1.
inline std::string Percent(double share) { return FormatQuantity(share * 100.0, "%"); }

// "0.115 uJ", "252 uJ", "5.88 mJ" from microjoules.
inline std::string Energy(double microjoules) {
  return microjoules >= 1000 ? FormatQuantity(microjoules / 1000, "mJ")
                             : FormatQuantity(microjoules, "uJ");
}

// "1.25x".
inline std::string Times(double factor) { return FormatNumber(factor) + "x"; }

}  // namespace kernelpro::tools::system_tools
