// Factories of the built-in system-level tools: timeline tools (launch overhead, fusion, host
// syncs, host<->device copies, idle gaps), SASS tools (tensor-core generation, register spills,
// fast-math intrinsics) and the energy-only tools (bank conflicts, spills, uncoalesced access,
// barriers). Each tool lives in its own file beside its test; BuiltinTools (builtin.cc) lists them.
#pragma once

#include <memory>

#include "tools/tool.h"

namespace kernelpro::tools {

// Timeline (ToolSource::kTimeline).
std::unique_ptr<ProfilingTool> MakeLaunchOverheadTool();  // launch_overhead
std::unique_ptr<ProfilingTool> MakeKernelFusionTool();    // kernel_fusion
std::unique_ptr<ProfilingTool> MakeSyncCallsTool();       // sync_calls
std::unique_ptr<ProfilingTool> MakeMemcpyHotPathTool();   // memcpy_hot_path
std::unique_ptr<ProfilingTool> MakeIdleGapsTool();        // idle_gaps

// SASS (ToolSource::kSass).
std::unique_ptr<ProfilingTool> MakeTensorCoreGenerationTool();  // tensor_core_generation
std::unique_ptr<ProfilingTool> MakeRegisterSpillsTool();        // register_spills
std::unique_ptr<ProfilingTool> MakeFastMathIntrinsicsTool();    // fast_math_intrinsics

// Energy-only (ToolSource::kEnergy): fire only when the pattern is latency-hidden.
std::unique_ptr<ProfilingTool> MakeEnergyBankConflictsTool();      // energy_bank_conflicts
std::unique_ptr<ProfilingTool> MakeEnergySpillsTool();             // energy_spills
std::unique_ptr<ProfilingTool> MakeEnergyUncoalescedTool();        // energy_uncoalesced
std::unique_ptr<ProfilingTool> MakeEnergyRedundantBarriersTool();  // energy_redundant_barriers

}  // namespace kernelpro::tools
