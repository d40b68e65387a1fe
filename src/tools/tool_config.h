// Which micro-profiling tools an analysis uses beyond the built-in ones, as the user named them
// (--tool-plugin, --tool-rules, --threshold, --no-energy, --energy-proxy). `kernelpro advise` and
// every run build their registry from it (BuildRegistry below); a search stores it with its run
// (search/run_config.h) so that a resumed run analyses with the same tools.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "tools/registry.h"

namespace kernelpro::tools {

struct ToolConfig {
  std::vector<std::string> plugins;     // shared libraries with more tools
  std::vector<std::string> rule_files;  // TOML rule files
  std::vector<std::string> thresholds;  // "TOOL.NAME=VALUE"
  bool no_energy = false;               // leave out the energy-only tools
  // --energy-proxy: r0 of Eq. 4's uncoalescing term (profile/energy_proxy.h), "access-width" (the
  // sectors a coalesced request of the kernel's loads touches) or "paper" (4, as printed).
  std::string energy_proxy = "access-width";
};

// The same tools with absolute plugin and rule-file paths, for a run that may resume elsewhere.
ToolConfig WithAbsolutePaths(ToolConfig config);

// The registry `config` describes: the built-in tools and the user's (a bad plugin or rule file
// is an error naming it), without the energy-only tools under no_energy, with the threshold
// values set on it (unknown tools or thresholds, or a value that is not a finite number, are
// errors listing what exists). Every analysis made with it, the search's included, uses those
// thresholds.
Result<ToolRegistry> BuildRegistry(const ToolConfig& config);

}  // namespace kernelpro::tools
