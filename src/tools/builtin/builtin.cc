// The built-in micro-profiling tools, listed explicitly in one place. Each tool lives in its own
// file beside its test; the order here is the order tools run and, at equal severity and
// priority, the order their findings appear. `kernelpro tools list` prints this list with each
// tool's Stage-1 classes (docs/tools.md keeps a copy that a test compares).
//
// The Stage-1 filter: which tools run for a kernel of each class (x). A memory-bound kernel is not
// told about tensor cores, a compute-bound one not about coalescing or DRAM bandwidth; energy
// tools run for every class. Each tool declares its classes (bottlenecks()); this table is
// printed by scripts/filter_table and builtin_test.cc keeps it equal to the declarations.
//
//   tool                           source    compute memory latency mixed
//   tensor_core_underutilization   ncu          x      .       .      x
//   warp_stall                     ncu          x      x       x      x
//   global_coalescing              ncu          .      x       x      x
//   barrier_stall                  ncu          x      x       x      x
//   vectorization                  ncu          .      x       .      x
//   register_pressure              ncu          x      x       x      x
//   dram_bandwidth                 ncu          .      x       .      .
//   occupancy_limiter              ncu          x      x       x      x
//   branch_divergence              ncu          x      .       x      x
//   shared_bank_conflicts          ncu          x      x       x      x
//   cache_hit_rates                ncu          .      x       .      x
//   wave_quantization              ncu          x      x       x      x
//   verified_work                  ncu          x      x       x      x
//   launch_overhead                timeline     x      x       x      x
//   kernel_fusion                  timeline     x      x       x      x
//   sync_calls                     timeline     x      x       x      x
//   memcpy_hot_path                timeline     x      x       x      x
//   idle_gaps                      timeline     x      x       x      x
//   tensor_core_generation         sass         x      .       .      x
//   register_spills                sass         x      x       x      x
//   fast_math_intrinsics           sass         .      x       .      .
//   energy_bank_conflicts          energy       x      x       x      x
//   energy_spills                  energy       x      x       x      x
//   energy_uncoalesced             energy       x      x       x      x
//   energy_redundant_barriers      energy       x      x       x      x
#include "tools/builtin/ncu_tools.h"
#include "tools/builtin/system_tools.h"
#include "tools/registry.h"

namespace kernelpro::tools {

std::vector<std::unique_ptr<ProfilingTool>> BuiltinTools() {
  std::vector<std::unique_ptr<ProfilingTool>> tools;
  // Kernel level: ncu counters of the candidate's kernels (duration-weighted aggregate).
  tools.push_back(MakeTensorCoreUnderutilizationTool());
  tools.push_back(MakeWarpStallTool());
  tools.push_back(MakeGlobalCoalescingTool());
  tools.push_back(MakeBarrierStallTool());
  tools.push_back(MakeVectorizationTool());
  tools.push_back(MakeRegisterPressureTool());
  tools.push_back(MakeDramBandwidthTool());
  tools.push_back(MakeOccupancyLimiterTool());
  tools.push_back(MakeBranchDivergenceTool());
  tools.push_back(MakeSharedBankConflictsTool());
  tools.push_back(MakeCacheHitRatesTool());
  tools.push_back(MakeWaveQuantizationTool());
  tools.push_back(MakeVerifiedWorkTool());
  // System level: the timeline of one forward call.
  tools.push_back(MakeLaunchOverheadTool());
  tools.push_back(MakeKernelFusionTool());
  tools.push_back(MakeSyncCallsTool());
  tools.push_back(MakeMemcpyHotPathTool());
  tools.push_back(MakeIdleGapsTool());
  // Instruction level: the SASS of the built extension.
  tools.push_back(MakeTensorCoreGenerationTool());
  tools.push_back(MakeRegisterSpillsTool());
  tools.push_back(MakeFastMathIntrinsicsTool());
  // Energy only: waste hidden under latency (always run; capped below speed findings).
  tools.push_back(MakeEnergyBankConflictsTool());
  tools.push_back(MakeEnergySpillsTool());
  tools.push_back(MakeEnergyUncoalescedTool());
  tools.push_back(MakeEnergyRedundantBarriersTool());
  return tools;
}

}  // namespace kernelpro::tools
