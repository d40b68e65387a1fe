#include "tools/tool_config.h"

#include <filesystem>
#include <memory>

#include "core/number_check.h"
#include "tools/plugin.h"
#include "tools/rule_tool.h"

namespace kernelpro::tools {
namespace {

// Parses --threshold values ("warp_stall.high=35") against the registry: unknown tools or
// thresholds are errors listing what exists.
Result<ThresholdOverrides> ParseThresholds(const ToolConfig& options,
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

}  // namespace

ToolConfig WithAbsolutePaths(ToolConfig options) {
  for (std::vector<std::string>* paths : {&options.plugins, &options.rule_files}) {
    for (std::string& path : *paths) {
      std::error_code ec;
      const std::filesystem::path made = std::filesystem::absolute(path, ec);
      if (!ec) path = made.lexically_normal().string();
    }
  }
  return options;
}

Result<ToolRegistry> BuildRegistry(const ToolConfig& options) {
  ToolRegistry registry;
  auto add_all = [&](std::vector<std::unique_ptr<ProfilingTool>> tools) -> Status {
    for (auto& tool : tools) {
      if (options.no_energy && tool->source() == ToolSource::kEnergy) continue;
      if (Status s = registry.Add(std::move(tool)); !s.ok()) return s;
    }
    return Status::Ok();
  };
  if (Status s = add_all(BuiltinTools()); !s.ok()) return s;
  for (const std::string& path : options.plugins) {
    auto tools = LoadToolPlugin(path);
    if (!tools.ok()) return tools.status();
    if (Status s = add_all(std::move(*tools)); !s.ok()) return s;
  }
  for (const std::string& path : options.rule_files) {
    auto tools = LoadRuleFile(path);
    if (!tools.ok()) return tools.status();
    if (Status s = add_all(std::move(*tools)); !s.ok()) return s;
  }
  auto overrides = ParseThresholds(options, registry);
  if (!overrides.ok()) return overrides.status();
  registry.SetThresholdOverrides(std::move(*overrides));
  return registry;
}

}  // namespace kernelpro::tools
