// The Nsight Compute metric catalog: the hardware counters kernelpro asks ncu for, grouped by
// what the micro-profiling tools diagnose with them.
//
// One explicit list (NcuMetricCatalog) rather than ncu sections: sections change between ncu
// versions and collect far more than the tools read, and every extra counter costs replay passes.
// Each name is the exact column ncu prints with `--csv --page raw` for that request, so tools look
// values up in NcuKernel::values by these names (or the constants below).
//
// Portability: every name exists on Hopper (checked by a test against `ncu --query-metrics` of an
// H200, tests/fixtures/h200/ncu_query_metrics.csv) and on Ampere (sm_80). ncu aborts the whole run
// when one requested metric is unknown to the device, so Hopper-only counters (GMMA/TMA pipes,
// `*_gmma_*` stall reasons) are deliberately absent. On Hopper the HMMA pipe counters include
// warpgroup MMA (WGMMA) work: the cuBLAS bf16 fixture shows 97 % hmma pipe utilisation for a
// kernel that only issues WGMMA, so no Hopper-only counter is needed for tensor utilisation.
//
// "Memory dependency" stalls: the paper's WarpStallTool reads
// smsp__warp_issue_stalled_memory_dependency_per_warp_active.pct, a pre-Volta stall reason that no
// longer exists (Volta split it into the long scoreboard, for L1TEX operations: global, local,
// surface and texture memory; and the short scoreboard, for MIO operations: shared memory and
// special math). kernelpro maps "memory dependency" to the long-scoreboard stall; see
// kNcuMemoryDependencyStall.
//
// Everything here is immutable after first use and safe to read from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelpro::profile {

struct NcuMetric {
  std::string name;         // exact ncu metric name as requested and as printed in the CSV
  std::string category;     // "throughput", "memory", "occupancy", "warp_stalls", "instructions",
                            // "tensor"
  std::string description;  // one line for prompts and reports: what it measures, in which unit
  std::string aggregation;  // "sum" (counts, bytes, time) or "mean" (percentages, rates, per-launch
                            // properties): how AggregateKernels combines kernels, duration-weighted
};

// The catalog, in a stable order (grouped by category). About 70 entries, names unique.
const std::vector<NcuMetric>& NcuMetricCatalog();

// The catalog's names joined with commas: the value of ncu's --metrics option.
std::string NcuMetricArgument();

// The catalog entry named exactly `name`, or nullptr.
const NcuMetric* FindNcuMetric(std::string_view name);

// How to combine `name` across kernels: the catalog's aggregation when the metric is listed;
// otherwise "mean" for percentages, ratios and rates (unit "%", a unit with '/', "hz", or a name
// with a "pct", "ratio" or "per" part between '_' and '.') and for per-launch or per-device
// properties (launch__*,
// device__*, and ncu's other non-counter prefixes); "sum" for everything else, which is a counter.
std::string_view NcuAggregation(std::string_view name, std::string_view unit);

// Names the micro-profiling tools read, so they are spelled once. Each one is in the catalog.
inline constexpr std::string_view kNcuDuration = "gpu__time_duration.sum";
inline constexpr std::string_view kNcuSmThroughputPct =
    "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kNcuMemoryThroughputPct =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kNcuDramThroughputPct =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kNcuDramBytesRead = "dram__bytes_read.sum";
inline constexpr std::string_view kNcuDramBytesWrite = "dram__bytes_write.sum";
inline constexpr std::string_view kNcuGlobalLoadSectors =
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr std::string_view kNcuGlobalLoadRequests =
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr std::string_view kNcuGlobalStoreSectors =
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr std::string_view kNcuGlobalStoreRequests =
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
inline constexpr std::string_view kNcuLocalLoadSectors =
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum";
inline constexpr std::string_view kNcuLocalStoreSectors =
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum";
inline constexpr std::string_view kNcuAchievedOccupancyPct =
    "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kNcuRegistersPerThread = "launch__registers_per_thread";
inline constexpr std::string_view kNcuInstructionsExecuted = "smsp__inst_executed.sum";
inline constexpr std::string_view kNcuThreadsPerInstruction =
    "smsp__thread_inst_executed_per_inst_executed.ratio";
inline constexpr std::string_view kNcuIssueActivePct =
    "smsp__issue_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kNcuEligibleWarpsPerCycle =
    "smsp__warps_eligible.avg.per_cycle_active";
// FP16/BF16 tensor-pipe utilisation; on Hopper it includes WGMMA (see the header comment).
inline constexpr std::string_view kNcuTensorPipePct =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kNcuLongScoreboardStall =
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct";
inline constexpr std::string_view kNcuShortScoreboardStall =
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct";
inline constexpr std::string_view kNcuBarrierStall =
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct";
inline constexpr std::string_view kNcuBranchResolvingStall =
    "smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct";
// The paper's "memory dependency" stall on Volta and later (see the header comment).
inline constexpr std::string_view kNcuMemoryDependencyStall = kNcuLongScoreboardStall;

}  // namespace kernelpro::profile
