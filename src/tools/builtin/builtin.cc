// The built-in micro-profiling tools, listed explicitly in one place. Each tool lives in its own
// file beside its test; the order here is the order tools run and, at equal severity and
// priority, the order their findings appear. `kernelpro tools list` prints this list with each
// tool's Stage-1 classes (docs/tools.md keeps a copy that a test compares).
#include "tools/builtin/system_tools.h"
#include "tools/registry.h"

namespace kernelpro {

std::vector<std::unique_ptr<ProfilingTool>> BuiltinTools() {
  std::vector<std::unique_ptr<ProfilingTool>> tools;
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
