#include "cli/tool_options.h"

#include <cstdlib>

#include "cli/common.h"
#include "tools/plugin.h"
#include "tools/rule_tool.h"

namespace kernelpro::cli {

void AddToolOptions(CLI::App& command, ToolOptions& options) {
  command
      .add_option("--tool-plugin", options.plugins,
                  "Shared library adding tools (C ABI, repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      .add_option("--tool-rules", options.rule_files, "TOML file of declarative tools (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      .add_option("--threshold", options.thresholds,
                  "Override a tool threshold: TOOL.NAME=VALUE (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command.add_flag("--no-energy", options.no_energy, "Leave out the energy-only tools");
}

Result<ToolRegistry> BuildRegistry(const ToolOptions& options) {
  ToolRegistry registry = BuiltinRegistry();
  auto add_all = [&](Result<std::vector<std::unique_ptr<ProfilingTool>>> tools) -> Status {
    if (!tools.ok()) return tools.status();
    for (auto& tool : *tools) {
      if (Status s = registry.Add(std::move(tool)); !s.ok()) return s;
    }
    return Status::Ok();
  };
  for (const std::string& path : options.plugins) {
    if (Status s = add_all(LoadToolPlugin(path)); !s.ok()) return s;
  }
  for (const std::string& path : options.rule_files) {
    if (Status s = add_all(LoadRuleFile(path)); !s.ok()) return s;
  }
  return registry;
}

Result<ThresholdOverrides> ParseThresholds(const ToolOptions& options,
                                           const ToolRegistry& registry) {
  ThresholdOverrides overrides;
  for (const std::string& item : options.thresholds) {
    std::size_t dot = item.find('.'), eq = item.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot) {
      return Status::InvalidArgument("--threshold " + item +
                                     ": expected TOOL.NAME=VALUE, e.g. warp_stall.high=35");
    }
    std::string tool_name = item.substr(0, dot), name = item.substr(dot + 1, eq - dot - 1);
    std::string value_text = item.substr(eq + 1);
    const ProfilingTool* tool = registry.Find(tool_name);
    if (!tool)
      return Status::InvalidArgument("--threshold " + item + ": no tool named '" + tool_name +
                                     "' (see `kernelpro tools list`)");
    std::string known;
    bool found = false;
    for (const ThresholdSpec& spec : tool->thresholds()) {
      found = found || spec.name == name;
      known += (known.empty() ? "" : ", ") + spec.name;
    }
    if (!found) {
      return Status::InvalidArgument("--threshold " + item + ": tool '" + tool_name +
                                     "' has no threshold '" + name +
                                     "' (it has: " + (known.empty() ? "none" : known) + ")");
    }
    // Thresholds compare with measured values; NaN would make every comparison false and turn the
    // tool off without a word.
    if (std::string problem = CheckNumber(value_text, NumberRange{}); !problem.empty()) {
      return Status::InvalidArgument("--threshold " + item + ": " + problem);
    }
    const double value = std::strtod(value_text.c_str(), nullptr);
    overrides[tool_name][name] = value;
  }
  return overrides;
}

}  // namespace kernelpro::cli
