// The GPU optimize writes the programmer's prompts for (their GPU section, the arch flag they
// give): the GPU the run's evaluations actually use, unless --gpu names another. It is detected as
// Stage 1 detects its GPU: the worker asks torch, on the first GPU of --gpus. On --device cpu
// nothing is detected (the prompts have no GPU section there). When detection fails the prompts
// get the generic GPU section (prompts/gpu_generic.md) rather than another GPU's, and a note says
// so. The run records the target with its options and the note in its report.
//
// The detection is a function the caller passes in, so tests choose what it reports without a GPU.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "agents/gpu_target.h"
#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::app {

// Reports the GPU the evaluations run on, or why it cannot.
using GpuDetector = std::function<Result<agents::GpuTarget>()>;

struct PromptGpu {
  agents::GpuTarget target;
  std::string note;  // for the run's notes: what was detected, or why nothing was; "" with --gpu
};

// `forced` (from --gpu) wins; on cpu `detect` is not called and the target stays the default; on
// cuda the detected GPU, else an unknown architecture (the generic GPU section).
PromptGpu ChoosePromptGpu(const std::string& device, const std::optional<agents::GpuTarget>& forced,
                          const GpuDetector& detect);

// The real detector's answer: the GPU in what the worker's inspect step of a cuda run reported
// (app::InspectDevice: compute capability and device name), or why there is none.
Result<agents::GpuTarget> GpuTargetFromInspect(const Result<Json>& info);

}  // namespace kernelpro::app
