// The built-in micro-profiling tools, listed explicitly in one place. Each tool lives in its own
// file beside its test; the order here is the order tools run and, at equal severity and
// priority, the order their findings appear. `kernelpro tools list` prints this list with each
// tool's Stage-1 classes (docs/tools.md keeps a copy that a test compares).
#include "tools/builtin/ncu_tools.h"
#include "tools/builtin/system_tools.h"
#include "tools/registry.h"

namespace kernelpro {

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
  tools.push_back(MakeWaveQuantizationTool());
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

}  // namespace kernelpro
