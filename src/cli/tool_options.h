// The options every command that runs micro-profiling tools shares: user tools from plugins and
// rule files, threshold overrides, the energy partition. Declared once here, used by `advise`
// and `tools list`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tools/registry.h"

namespace kernelpro::cli {

struct ToolOptions {
  std::vector<std::string> plugins;     // --tool-plugin PATH (repeatable)
  std::vector<std::string> rule_files;  // --tool-rules PATH (repeatable)
  std::vector<std::string> thresholds;  // --threshold TOOL.NAME=VALUE (repeatable)
  bool no_energy = false;               // --no-energy
};

void AddToolOptions(CLI::App& command, ToolOptions& options);

// The built-in tools plus the user's; a bad plugin or rule file is an error naming it.
Result<ToolRegistry> BuildRegistry(const ToolOptions& options);

// Parses --threshold values ("warp_stall.high=35") against the registry: unknown tools or
// thresholds are errors listing what exists.
Result<ThresholdOverrides> ParseThresholds(const ToolOptions& options,
                                           const ToolRegistry& registry);

}  // namespace kernelpro::cli
