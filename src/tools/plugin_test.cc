#include "tools/plugin.h"

#include <gtest/gtest.h>

#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_plugin_test {

TEST(PluginTest, TheExamplePluginLoadsAndAnalyses) {
  auto tools = LoadToolPlugin(KERNELPRO_EXAMPLE_PLUGIN);
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  ASSERT_EQ(tools->size(), 1u);
  const ProfilingTool& tool = *(*tools)[0];
  EXPECT_EQ(tool.name(), "atomic_contention");
  EXPECT_EQ(tool.source(), ToolSource::kNcu);
  EXPECT_EQ(tool.priority(), 60);
  EXPECT_EQ(tool.bottlenecks().size(), 3u);
  EXPECT_EQ(tool.required_metrics().at(0), "sass.atomic");
  const std::string stall = "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct";
  MetricSet m = testing::MakeMetrics({{"sass.atomic", 3}, {stall, 25}});
  ToolOutput out = testing::Run(tool, m);
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_EQ(out.title, "Global atomics throttle the load/store queue (25% lg_throttle stalls)");
  EXPECT_EQ(out.recommendations.size(), 3u);
  EXPECT_EQ(out.observed.at(1).value, 25);
  EXPECT_NE(out.code_example.find("__shfl_down_sync"), std::string::npos);
  EXPECT_EQ(testing::Run(tool, testing::With(m, stall, 45)).severity, Severity::kCritical);
  EXPECT_FALSE(testing::Run(tool, testing::With(m, "sass.atomic", 0)).triggered);
  EXPECT_FALSE(testing::Run(tool, testing::With(m, stall, 20)).triggered);  // at the threshold
  ToolContext context;
  context.overrides["atomic_contention"]["lg_throttle"] = 10;
  EXPECT_TRUE(testing::Run(tool, testing::With(m, stall, 15), context).triggered);
  EXPECT_TRUE(testing::Run(tool, testing::Without(m, "sass.atomic")).skipped);
}

TEST(PluginTest, LibrariesThatAreNotPluginsAreClearErrors) {
  auto missing = LoadToolPlugin("/no/such/libtools.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
  auto not_plugin = LoadToolPlugin("/lib/x86_64-linux-gnu/libm.so.6");
  ASSERT_FALSE(not_plugin.ok());
  EXPECT_NE(not_plugin.status().message().find("does not export kernelpro_tool_plugin"),
            std::string::npos);
  auto not_library = LoadToolPlugin(std::string(KERNELPRO_SOURCE_DIR) + "/README.md");
  ASSERT_FALSE(not_library.ok());
  EXPECT_NE(not_library.status().message().find("cannot load tool plugin"), std::string::npos);
}

}  // namespace tools_plugin_test
}  // namespace kernelpro::tools
