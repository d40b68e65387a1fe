#include "tools/plugin.h"

#include <dlfcn.h>

#include <cmath>
#include <filesystem>

#include "tools/kernelpro_tool_plugin.h"

namespace kernelpro::tools {
namespace {

std::string Text(const char* s) { return s ? std::string(s) : std::string(); }

class PluginTool : public ProfilingTool {
 public:
  PluginTool(const kp_tool& tool, ToolSource source, std::vector<roofline::Bottleneck> bottlenecks,
             std::string library)
      : tool_(tool),
        source_(source),
        bottlenecks_(std::move(bottlenecks)),
        library_(std::move(library)) {}

  std::string name() const override { return Text(tool_.name); }
  ToolSource source() const override { return source_; }
  std::string description() const override {
    return Text(tool_.description) + " (plugin " + library_ + ")";
  }
  std::vector<std::string> required_metrics() const override {
    std::vector<std::string> names;
    for (int i = 0; i < tool_.required_count; ++i) names.push_back(Text(tool_.required_metrics[i]));
    return names;
  }
  std::vector<ThresholdSpec> thresholds() const override {
    std::vector<ThresholdSpec> specs;
    for (int i = 0; i < tool_.threshold_count; ++i) {
      const kp_threshold& t = tool_.thresholds[i];
      specs.push_back({Text(t.name), t.value, Text(t.unit), Text(t.description)});
    }
    return specs;
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override { return bottlenecks_; }
  int priority() const override { return tool_.priority; }

  ToolOutput Analyze(const MetricSet& metrics, const ToolContext& context) const override {
    ToolOutput out = NewOutput(context);
    std::vector<double> thresholds;
    for (const AppliedThreshold& t : out.thresholds) thresholds.push_back(t.value);
    std::string bottleneck =
        context.bottleneck ? std::string(roofline::BottleneckName(*context.bottleneck)) : "";
    kp_metrics api{&metrics,
                   [](const void* state, const char* name) -> int {
                     return name && static_cast<const MetricSet*>(state)->Has(name) ? 1 : 0;
                   },
                   [](const void* state, const char* name) -> double {
                     if (!name) return std::nan("");
                     auto v = static_cast<const MetricSet*>(state)->Find(name);
                     return v ? *v : std::nan("");
                   },
                   bottleneck.c_str(),
                   context.sm_major,
                   thresholds.data()};
    kp_tool_output result{};
    if (tool_.analyze(&api, &result) != 0) {
      out.skipped = true;
      out.skip_reason = "plugin " + library_ + " reported an error";
      return out;
    }
    out.triggered = result.triggered != 0;
    if (!out.triggered) return out;
    auto severity = ParseSeverity(Text(result.severity));
    out.severity = severity.ok() ? *severity : Severity::kMedium;
    out.title = Text(result.title);
    out.summary = Text(result.summary);
    out.root_cause = Text(result.root_cause);
    out.code_example = Text(result.code_example);
    for (int i = 0; i < result.recommendation_count && result.recommendations; ++i) {
      out.recommendations.push_back({Text(result.recommendations[i].action),
                                     Text(result.recommendations[i].expected_improvement)});
    }
    for (int i = 0; i < result.observed_count && result.observed; ++i) {
      out.observed.push_back(
          {Text(result.observed[i].name), result.observed[i].value, Text(result.observed[i].unit)});
    }
    return out;
  }

 private:
  kp_tool tool_;
  ToolSource source_;
  std::vector<roofline::Bottleneck> bottlenecks_;
  std::string library_;
};

}  // namespace

Result<std::vector<std::unique_ptr<ProfilingTool>>> LoadToolPlugin(const std::string& path) {
  // dlopen searches the library path for a bare name; a plugin is always a file the user names.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  if (!std::filesystem::exists(file))
    return Status::NotFound("tool plugin " + path + " does not exist");
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status::InvalidArgument("cannot load tool plugin " + path + ": " + Text(dlerror()));
  auto entry = reinterpret_cast<kernelpro_tool_plugin_fn>(dlsym(handle, "kernelpro_tool_plugin"));
  if (!entry) {
    dlclose(handle);
    return Status::InvalidArgument("tool plugin " + path +
                                   " does not export kernelpro_tool_plugin()");
  }
  int count = 0;
  const kp_tool* tools = entry(KERNELPRO_TOOL_PLUGIN_ABI_VERSION, &count);
  if (!tools || count <= 0) {
    dlclose(handle);
    return Status::InvalidArgument("tool plugin " + path + " offers no tools for ABI version " +
                                   std::to_string(KERNELPRO_TOOL_PLUGIN_ABI_VERSION));
  }
  std::vector<std::unique_ptr<ProfilingTool>> out;
  std::string name = std::filesystem::path(path).filename().string();
  for (int i = 0; i < count; ++i) {
    const kp_tool& t = tools[i];
    std::string where = "tool plugin " + path + ": tool #" + std::to_string(i + 1);
    if (!t.name || !*t.name || !t.analyze) {
      dlclose(handle);
      return Status::InvalidArgument(where + " lacks a name or an analyze function");
    }
    auto source = ParseToolSource(Text(t.source));
    if (!source.ok()) {
      dlclose(handle);
      return Status::InvalidArgument(where + " (" + t.name + "): " + source.status().message());
    }
    std::vector<roofline::Bottleneck> bottlenecks;
    for (int b = 0; b < t.bottleneck_count; ++b) {
      auto parsed = roofline::ParseBottleneck(Text(t.bottlenecks[b]));
      if (!parsed.ok()) {
        dlclose(handle);
        return Status::InvalidArgument(where + " (" + t.name + "): " + parsed.status().message());
      }
      bottlenecks.push_back(*parsed);
    }
    if (t.bottleneck_count == 0)
      bottlenecks.assign(std::begin(roofline::kAllBottlenecks),
                         std::end(roofline::kAllBottlenecks));
    out.push_back(std::make_unique<PluginTool>(t, *source, std::move(bottlenecks), name));
  }
  return out;  // the handle stays open: the tools point into the library
}

}  // namespace kernelpro::tools
