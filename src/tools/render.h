// Renders an Analysis as the markdown "Automated Bottleneck Analysis" section that the profiling
// agent puts into the LLM's prompt and `kernelpro advise` prints.
//
// Findings appear in the analysis's order (severity, then priority, then name); energy findings
// follow in their own "Energy Efficiency Notes" subsection. The text is bounded: past max_chars,
// code examples go first, then the lowest-ranked findings (a closing line says how many). The
// output is a pure function of the analysis: identical metrics give identical bytes.
#pragma once

#include <string>

#include "tools/registry.h"

namespace kernelpro::tools {

struct RenderOptions {
  std::size_t max_chars = 8000;   // the whole section, headers included
  std::size_t max_findings = 12;  // speed and energy findings together
  bool code_examples = true;      // include the tools' code examples while they fit
  bool list_skipped = true;       // a closing line naming tools skipped for missing metrics
};

std::string RenderGuidance(const Analysis& analysis, const RenderOptions& options = {});

}  // namespace kernelpro::tools
