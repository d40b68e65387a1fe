// Which micro-profiling tools an analysis uses beyond the built-in ones, as the user named them
// (--tool-plugin, --tool-rules, --threshold, --no-energy, --energy-proxy). `kernelpro advise` and
// `optimize` build their registry from it (cli/option_groups.h: BuildRegistry); a search stores it
// with its run (search/run_config.h) so that a resumed run analyses with the same tools.
#pragma once

#include <string>
#include <vector>

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

}  // namespace kernelpro::tools
