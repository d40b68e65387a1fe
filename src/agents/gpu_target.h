// The GPU the prompts are written for: its architecture decides the prompt's GPU section and the
// -gencode flags a candidate is told to use. Plain values; copy freely across threads.
#pragma once

#include <string>

#include "core/status.h"

namespace kernelpro::agents {

// `arch` is "sm_80", "sm_90", "sm_100", ...; from the detected device or --gpu. "" when it is not
// known: the prompts then carry the generic GPU section.
struct GpuTarget {
  std::string arch = "sm_90";
  std::string name;   // "NVIDIA H200", for the prompt's text; may be empty
  int major() const;  // 9 for sm_90 / sm_90a
  int minor() const;  // 0 for sm_90
};

// "sm_90", "sm90", "90", "9.0", "H100", "H200", "A100", "L40S", "RTX 4090", "B200" → a target.
Result<GpuTarget> ParseGpuTarget(const std::string& text);

}  // namespace kernelpro::agents
