// `kernelpro tools list`: the micro-profiling tools a run would use, with their sources, Stage-1
// affinity, priority and thresholds (built-in plus any --tool-plugin / --tool-rules).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/option_groups.h"

namespace kernelpro::cli {
namespace {

struct ToolsArgs {
  bool json = false;
  tools::ToolConfig tools;
};

Json DescribeTool(const tools::ProfilingTool& tool) {
  Json bottlenecks = Json::array(), thresholds = Json::array();
  if (tool.source() == tools::ToolSource::kEnergy) {
    for (roofline::Bottleneck b : roofline::kAllBottlenecks)
      bottlenecks.push_back(roofline::BottleneckName(b));
  } else {
    for (roofline::Bottleneck b : tool.bottlenecks())
      bottlenecks.push_back(roofline::BottleneckName(b));
  }
  for (const tools::ThresholdSpec& t : tool.thresholds()) {
    thresholds.push_back(
        {{"name", t.name}, {"value", t.value}, {"unit", t.unit}, {"description", t.description}});
  }
  return {{"name", tool.name()},
          {"source", tools::ToolSourceName(tool.source())},
          {"description", tool.description()},
          {"bottlenecks", bottlenecks},
          {"priority", tool.priority()},
          {"required_metrics", tool.required_metrics()},
          {"thresholds", thresholds}};
}

int ListTools(const ToolsArgs& args) {
  auto registry = tools::BuildRegistry(args.tools);
  if (!registry.ok()) {
    std::cerr << "kernelpro tools list: " << registry.status().message() << "\n";
    return 2;
  }
  if (args.json) {
    Json list = Json::array();
    for (const auto& tool : registry->tools()) list.push_back(DescribeTool(*tool));
    std::cout << DumpJson(list) << "\n";
    return 0;
  }
  std::cout << registry->tools().size()
            << " tools (runs for: the Stage-1 classes that select the tool; "
            << "energy tools run for every class)\n\n";
  for (const auto& tool : registry->tools()) {
    Json d = DescribeTool(*tool);
    std::string classes;
    for (const auto& b : d["bottlenecks"])
      classes += (classes.empty() ? "" : ",") + b.get<std::string>();
    std::cout << tool->name() << "  [" << tools::ToolSourceName(tool->source()) << "; runs for "
              << classes << "; priority " << tool->priority() << "]\n    " << tool->description()
              << "\n";
    std::string thresholds;
    for (const tools::ThresholdSpec& t : tool->thresholds()) {
      thresholds +=
          (thresholds.empty() ? "" : ", ") + t.name + " " + tools::FormatQuantity(t.value, t.unit);
    }
    if (!thresholds.empty()) std::cout << "    thresholds: " << thresholds << "\n";
  }
  return 0;
}

}  // namespace

CommandRunner RegisterToolsCommand(CLI::App& app) {
  auto args = std::make_shared<ToolsArgs>();
  CLI::App* tools = app.add_subcommand("tools", "The micro-profiling tools");
  tools->require_subcommand(1);
  CLI::App* list = tools->add_subcommand(
      "list", "ListTools the tools: source, Stage-1 classes, priority, thresholds");
  list->footer(
      "--json prints an array of objects: name, source, bottlenecks, priority, "
      "thresholds, ...");
  AddOption(*list, kJsonOption, args->json);
  AddToolOptions(*list, args->tools);
  return [args] { return ListTools(*args); };
}

}  // namespace kernelpro::cli
