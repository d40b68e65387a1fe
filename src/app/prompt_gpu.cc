#include "app/prompt_gpu.h"

#include <vector>

namespace kernelpro::app {

PromptGpu ChoosePromptGpu(const std::string& device, const std::optional<agents::GpuTarget>& forced,
                          const GpuDetector& detect) {
  PromptGpu chosen;
  if (forced) {
    chosen.target = *forced;
    return chosen;
  }
  if (device != "cuda") return chosen;
  Result<agents::GpuTarget> detected = detect();
  if (detected.ok()) {
    chosen.target = *detected;
    chosen.note =
        "prompts: written for the GPU the run uses, " +
        (detected->name.empty() ? detected->arch : detected->name + " (" + detected->arch + ")") +
        ", detected";
    return chosen;
  }
  chosen.target.arch.clear();  // unknown: the generic GPU section, not another GPU's notes
  chosen.target.name.clear();
  chosen.note = "prompts: the GPU could not be detected (" + detected.status().message() +
                "); the prompts carry the generic GPU section (name the GPU with --gpu)";
  return chosen;
}

Result<agents::GpuTarget> GpuTargetFromInspect(const Result<Json>& info) {
  if (!info.ok()) return info.status();
  const std::string name = JsonGet<std::string>(*info, "gpu_name", "");
  const auto capability = JsonGet<std::vector<int>>(*info, "compute_capability", {});
  if (capability.size() == 2 && capability[0] > 0 && capability[1] >= 0) {
    agents::GpuTarget target;
    target.arch = "sm_" + std::to_string(capability[0]) + std::to_string(capability[1]);
    target.name = name;
    return target;
  }
  if (!name.empty()) return agents::ParseGpuTarget(name);
  return Status::NotFound("the worker saw no CUDA device");
}

}  // namespace kernelpro::app
