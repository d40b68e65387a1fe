#include "profile/ncu_catalog.h"

#include <unordered_map>

#include "core/text.h"

namespace kernelpro::profile {
namespace {

// Category "throughput": where the kernel sits on the roofline.
std::vector<NcuMetric> ThroughputMetrics() {
  return {
      {"gpu__time_duration.sum", "throughput",
       "Kernel duration on the GPU (ns); the weight of the duration-weighted aggregate.", "sum"},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "throughput",
       "Compute (SM) throughput: the busiest SM unit, % of its peak. Compute side of the roofline.",
       "mean"},
      {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "throughput",
       "Memory throughput: the busiest of L1, L2 and DRAM, % of its peak. Memory side of the "
       "roofline.",
       "mean"},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "throughput",
       "DRAM bandwidth used, % of the device's peak.", "mean"},
      {"dram__bytes.sum.per_second", "throughput",
       "Achieved DRAM bandwidth (byte/second), read plus write.", "mean"},
      {"l1tex__throughput.avg.pct_of_peak_sustained_active", "throughput",
       "L1/texture cache throughput, % of peak.", "mean"},
      {"lts__throughput.avg.pct_of_peak_sustained_elapsed", "throughput",
       "L2 cache throughput, % of peak.", "mean"},
      {"sm__cycles_elapsed.avg.per_second", "throughput",
       "SM clock while profiled (Hz); shows whether ncu locked clocks to base.", "mean"},
      {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "throughput",
       "FMA pipe (FP32 multiply-add) busy, % of peak.", "mean"},
      {"sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", "throughput",
       "ALU pipe (integer, logic, FP32 compare) busy, % of peak.", "mean"},
  };
}

// Category "memory": traffic, coalescing, caches, spills, bank conflicts.
std::vector<NcuMetric> MemoryMetrics() {
  return {
      {"dram__bytes_read.sum", "memory", "Bytes read from DRAM (energy proxy input).", "sum"},
      {"dram__bytes_write.sum", "memory", "Bytes written to DRAM (energy proxy input).", "sum"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "memory",
       "32-byte sectors requested by global loads (energy proxy input).", "sum"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "memory",
       "Global load requests (one per warp-level load instruction).", "sum"},
      {"smsp__sass_data_bytes_mem_global_op_ld.sum", "memory",
       "Bytes the global loads asked for (active threads x access width); / 32 / requests is the "
       "sectors a coalesced request touches (energy proxy input).",
       "sum"},
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", "memory",
       "Sectors per global load request: 4 is a coalesced 32-bit warp load, up to 32 when each "
       "thread touches its own sector.",
       "mean"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "memory",
       "32-byte sectors written by global stores.", "sum"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "memory", "Global store requests.",
       "sum"},
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio", "memory",
       "Sectors per global store request: far above 4 means uncoalesced (strided) stores.", "mean"},
      {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "memory",
       "Local-memory load sectors: register spills and local arrays read back (energy proxy "
       "input).",
       "sum"},
      {"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", "memory",
       "Local-memory store sectors: register spills and local arrays written.", "sum"},
      {"l1tex__t_sector_hit_rate.pct", "memory", "L1/texture cache sector hit rate, %.", "mean"},
      {"lts__t_sector_hit_rate.pct", "memory", "L2 cache sector hit rate, %.", "mean"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "memory",
       "Shared-memory bank conflicts on loads (extra wavefronts).", "sum"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "memory",
       "Shared-memory bank conflicts on stores (extra wavefronts).", "sum"},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "memory",
       "Shared-memory load wavefronts; divided by shared load instructions, 1 means conflict-free.",
       "sum"},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "memory",
       "Shared-memory store wavefronts; divided by shared store instructions, 1 means "
       "conflict-free.",
       "sum"},
  };
}

// Category "occupancy": how many warps are resident, and what limits them.
std::vector<NcuMetric> OccupancyMetrics() {
  return {
      {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy",
       "Achieved occupancy: active warps, % of the SM's maximum.", "mean"},
      {"launch__registers_per_thread", "occupancy",
       "Registers per thread (96 is a warning, 128 critical).", "mean"},
      {"launch__occupancy_limit_registers", "occupancy",
       "Blocks per SM allowed by the register file; the lowest limit binds.", "mean"},
      {"launch__occupancy_limit_shared_mem", "occupancy",
       "Blocks per SM allowed by shared memory; the lowest limit binds.", "mean"},
      {"launch__occupancy_limit_warps", "occupancy",
       "Blocks per SM allowed by the warp slots; the lowest limit binds.", "mean"},
      {"launch__occupancy_limit_blocks", "occupancy",
       "Blocks per SM allowed by the hardware block limit; the lowest limit binds.", "mean"},
      {"launch__waves_per_multiprocessor", "occupancy",
       "Waves of blocks per SM at full occupancy; a small fractional tail idles SMs.", "mean"},
      {"launch__block_size", "occupancy", "Threads per block.", "mean"},
      {"launch__shared_mem_per_block_static", "occupancy", "Static shared memory per block (byte).",
       "mean"},
      {"launch__shared_mem_per_block_dynamic", "occupancy",
       "Dynamic shared memory per block (byte).", "mean"},
  };
}

// Category "warp_stalls": why warps do not issue (% of active warps per cycle).
std::vector<NcuMetric> WarpStallMetrics() {
  return {
      {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", "warp_stalls",
       "Stalled on a long-scoreboard dependency: waiting for global, local, surface or texture "
       "memory. Stands in for the paper's memory_dependency stall, which Volta and later no "
       "longer report.",
       "mean"},
      {"smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct", "warp_stalls",
       "Stalled on a short-scoreboard dependency: shared memory or special math (MIO) results.",
       "mean"},
      {"smsp__warp_issue_stalled_barrier_per_warp_active.pct", "warp_stalls",
       "Stalled at a block barrier (__syncthreads) waiting for sibling warps.", "mean"},
      {"smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct", "warp_stalls",
       "Stalled waiting for a branch target to be computed.", "mean"},
      {"smsp__warp_issue_stalled_membar_per_warp_active.pct", "warp_stalls",
       "Stalled on a memory barrier (__threadfence).", "mean"},
      {"smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", "warp_stalls",
       "Stalled on a full local/global memory instruction queue: too many narrow memory "
       "instructions.",
       "mean"},
      {"smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct", "warp_stalls",
       "Stalled on a full MIO queue: heavy shared-memory or special-math traffic.", "mean"},
      {"smsp__warp_issue_stalled_tex_throttle_per_warp_active.pct", "warp_stalls",
       "Stalled on a full texture queue.", "mean"},
      {"smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct", "warp_stalls",
       "Stalled waiting for a busy math pipe: the kernel saturates an execution unit.", "mean"},
      {"smsp__warp_issue_stalled_wait_per_warp_active.pct", "warp_stalls",
       "Stalled on a fixed-latency dependency.", "mean"},
      {"smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct", "warp_stalls",
       "Stalled by the dispatcher.", "mean"},
      {"smsp__warp_issue_stalled_no_instruction_per_warp_active.pct", "warp_stalls",
       "Stalled on instruction fetch or an instruction-cache miss.", "mean"},
      {"smsp__warp_issue_stalled_not_selected_per_warp_active.pct", "warp_stalls",
       "Eligible but not selected: another warp issued (enough parallelism, not a problem).",
       "mean"},
      {"smsp__warp_issue_stalled_drain_per_warp_active.pct", "warp_stalls",
       "Stalled after EXIT draining memory stores.", "mean"},
      {"smsp__issue_active.avg.pct_of_peak_sustained_active", "warp_stalls",
       "Cycles in which the scheduler issued an instruction, %.", "mean"},
      {"smsp__warps_eligible.avg.per_cycle_active", "warp_stalls",
       "Warps eligible to issue per scheduler per cycle (below 1 starves the scheduler).", "mean"},
  };
}

// Category "instructions": mix, divergence, vector width.
std::vector<NcuMetric> InstructionMetrics() {
  return {
      {"smsp__inst_executed.sum", "instructions",
       "Warp-level instructions executed (energy proxy input).", "sum"},
      {"smsp__thread_inst_executed_per_inst_executed.ratio", "instructions",
       "Active threads per executed instruction; below 32 means branch divergence or "
       "predication.",
       "mean"},
      {"smsp__sass_branch_targets_threads_divergent.sum", "instructions",
       "Branch targets reached by a divergent subset of a warp's threads.", "sum"},
      {"smsp__sass_inst_executed_op_global_ld.sum", "instructions",
       "Global load instructions executed (warp level).", "sum"},
      {"smsp__sass_inst_executed_op_global_st.sum", "instructions",
       "Global store instructions executed (warp level).", "sum"},
      {"smsp__sass_inst_executed_op_shared_ld.sum", "instructions",
       "Shared-memory load instructions executed (warp level).", "sum"},
      {"smsp__sass_inst_executed_op_shared_st.sum", "instructions",
       "Shared-memory store instructions executed (warp level).", "sum"},
      {"sm__sass_inst_executed_op_ldgsts.sum", "instructions",
       "Asynchronous global-to-shared copies (cp.async, LDGSTS) executed.", "sum"},
      {"smsp__sass_inst_executed_op_memory_32b.sum", "instructions",
       "Memory instructions of 32-bit width per thread (scalar float/int).", "sum"},
      {"smsp__sass_inst_executed_op_memory_64b.sum", "instructions",
       "Memory instructions of 64-bit width per thread (float2, double).", "sum"},
      {"smsp__sass_inst_executed_op_memory_128b.sum", "instructions",
       "Memory instructions of 128-bit width per thread (float4): vectorised access.", "sum"},
      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "instructions",
       "FP32 fused multiply-add thread instructions (2 FLOP each).", "sum"},
      {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "instructions",
       "FP32 add thread instructions.", "sum"},
      {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "instructions",
       "FP32 multiply thread instructions.", "sum"},
  };
}

// Category "tensor": tensor-core use.
std::vector<NcuMetric> TensorMetrics() {
  return {
      {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor",
       "FP16/BF16/TF32 tensor pipe busy, % of peak; on Hopper it includes warpgroup MMA (WGMMA).",
       "mean"},
      {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor",
       "All tensor pipes busy (HMMA, IMMA, DMMA), % of peak.", "mean"},
      {"sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active", "tensor",
       "HMMA instruction issue rate, % of peak.", "mean"},
      {"sm__inst_executed_pipe_tensor_op_hmma.sum", "tensor",
       "Tensor-pipe warp instructions (HMMA; on Hopper also HGMMA: one warpgroup MMA counts once "
       "per "
       "warp, 4); 0 means the kernel never reached the FP16/BF16/TF32 tensor cores.",
       "sum"},
  };
}

std::vector<NcuMetric> BuildCatalog() {
  // Suffix grammar, for readers new to ncu: counters take a roll-up over units (.sum, .avg, .max)
  // optionally followed by a rate (.per_second, .per_cycle_active, .pct_of_peak_sustained_*);
  // ratios take .pct or .ratio; launch__* metrics describe the launch and take no suffix.
  std::vector<NcuMetric> catalog;
  for (const std::vector<NcuMetric>& category :
       {ThroughputMetrics(), MemoryMetrics(), OccupancyMetrics(), WarpStallMetrics(),
        InstructionMetrics(), TensorMetrics()}) {
    catalog.insert(catalog.end(), category.begin(), category.end());
  }
  return catalog;
}

// Whether `name`, split at '_' and '.', has `token` as a whole piece: "per" matches
// "per_second" and "_per_warp_active" but "ratio" does not match "gpu__time_duration".
bool HasToken(std::string_view name, std::string_view token) {
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find_first_of("_.", start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == token) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

const std::vector<NcuMetric>& NcuMetricCatalog() {
  static const std::vector<NcuMetric>* const catalog = new std::vector<NcuMetric>(BuildCatalog());
  return *catalog;
}

std::string NcuMetricArgument() {
  std::string joined;
  for (const NcuMetric& metric : NcuMetricCatalog()) {
    if (!joined.empty()) joined += ',';
    joined += metric.name;
  }
  return joined;
}

const NcuMetric* FindNcuMetric(std::string_view name) {
  // Indexed because AggregateKernels asks once per metric column (over 400 per kernel).
  static const auto* const index = [] {
    auto* by_name = new std::unordered_map<std::string_view, const NcuMetric*>();
    for (const NcuMetric& metric : NcuMetricCatalog()) by_name->emplace(metric.name, &metric);
    return by_name;
  }();
  auto it = index->find(name);
  return it == index->end() ? nullptr : it->second;
}

std::string_view NcuAggregation(std::string_view name, std::string_view unit) {
  if (const NcuMetric* metric = FindNcuMetric(name)) return metric->aggregation;
  // Adding up percentages or rates over kernels is meaningless; weighting them by duration gives
  // the value a single kernel doing all the work would show.
  if (unit == "%" || unit == "hz" || Contains(unit, "/")) return "mean";
  // Launch configuration and device properties are the same kind of number in every kernel
  // (registers per thread, SM count); a sum would grow with the number of launches.
  for (std::string_view prefix :
       {"launch__", "device__", "profiler__", "nvlink__", "c2clink__", "numa__"}) {
    if (name.starts_with(prefix)) return "mean";
  }
  if (HasToken(name, "pct") || HasToken(name, "ratio") || HasToken(name, "per")) return "mean";
  return "sum";
}

}  // namespace kernelpro::profile
