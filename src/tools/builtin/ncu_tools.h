// Factories of the built-in micro-profiling tools that read Nsight Compute counters (paper
// appendix B). Each tool lives in its own file beside its test; builtin.cc lists them.
//
//   warp_stall                    dominant warp-stall reason, with a reason-specific fix
//   barrier_stall                 warps parked at __syncthreads
//   tensor_core_underutilization  compute-heavy kernel leaving the tensor pipe idle
//   register_pressure             registers per thread that cap occupancy or risk spills
//   occupancy_limiter             low achieved occupancy and the limit that binds it
//   global_coalescing             global loads/stores touching more sectors than needed
//   vectorization                 memory-bound kernel moving data 32 bits at a time
//   branch_divergence             warps executing with few active threads
//   dram_bandwidth                memory-bound kernel far below DRAM peak
//   wave_quantization             a partial last wave (or a grid too small for the GPU)
//   shared_bank_conflicts         shared-memory bank conflicts that stall warps (not
//                                 latency-hidden)
//   cache_hit_rates               reused data missed by L1 or L2 in a memory-heavy kernel
//   verified_work                 far fewer DRAM bytes read or FLOPs executed than the problem
//                                 needs (Stage 1): skipped work
#pragma once

#include <memory>

#include "tools/tool.h"

namespace kernelpro::tools {

std::unique_ptr<ProfilingTool> MakeWarpStallTool();
std::unique_ptr<ProfilingTool> MakeBarrierStallTool();
std::unique_ptr<ProfilingTool> MakeTensorCoreUnderutilizationTool();
std::unique_ptr<ProfilingTool> MakeRegisterPressureTool();
std::unique_ptr<ProfilingTool> MakeOccupancyLimiterTool();
std::unique_ptr<ProfilingTool> MakeGlobalCoalescingTool();
std::unique_ptr<ProfilingTool> MakeVectorizationTool();
std::unique_ptr<ProfilingTool> MakeBranchDivergenceTool();
std::unique_ptr<ProfilingTool> MakeDramBandwidthTool();
std::unique_ptr<ProfilingTool> MakeWaveQuantizationTool();
std::unique_ptr<ProfilingTool> MakeSharedBankConflictsTool();
std::unique_ptr<ProfilingTool> MakeCacheHitRatesTool();
std::unique_ptr<ProfilingTool> MakeVerifiedWorkTool();

}  // namespace kernelpro::tools
