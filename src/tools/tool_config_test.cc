// The registry a run's tool configuration describes (tools/tool_config.h): the built-in tools, the
// user's, and thresholds that name a real tool's real threshold with a finite number.
#include "tools/tool_config.h"

#include <gtest/gtest.h>

#include <string>

namespace kernelpro::tools {
namespace tools_tool_config_test {

TEST(ToolConfigTest, TheBuiltInToolsWithTheThresholdsGiven) {
  ToolConfig config;
  config.thresholds = {"warp_stall.high=35"};
  auto registry = BuildRegistry(config);
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  EXPECT_NE(registry->Find("warp_stall"), nullptr);
  EXPECT_EQ(registry->threshold_overrides().at("warp_stall").at("high"), 35);
}

TEST(ToolConfigTest, WithoutEnergyTheEnergyOnlyToolsAreLeftOut) {
  auto all = BuildRegistry({});
  ToolConfig config;
  config.no_energy = true;
  auto some = BuildRegistry(config);
  ASSERT_TRUE(all.ok() && some.ok());
  int energy = 0;
  for (const auto& tool : all->tools()) energy += tool->source() == ToolSource::kEnergy;
  EXPECT_GT(energy, 0);
  EXPECT_EQ(some->tools().size() + energy, all->tools().size());
  for (const auto& tool : some->tools()) EXPECT_NE(tool->source(), ToolSource::kEnergy);
}

TEST(ToolConfigTest, AThresholdThatNamesNothingOrIsNoNumberSaysWhatExists) {
  auto message = [](const std::string& threshold) {
    ToolConfig config;
    config.thresholds = {threshold};
    auto registry = BuildRegistry(config);
    EXPECT_FALSE(registry.ok()) << threshold;
    return registry.ok() ? std::string() : registry.status().message();
  };
  EXPECT_NE(message("nosuch.high=1").find("no tool named 'nosuch'"), std::string::npos);
  EXPECT_NE(message("warp_stall.low=1").find("(it has: "), std::string::npos);
  EXPECT_NE(message("warp_stall.high").find("expected TOOL.NAME=VALUE"), std::string::npos);
  // NaN would make every comparison false and turn the tool off without a word.
  EXPECT_NE(message("warp_stall.high=nan").find("'nan' is not accepted"), std::string::npos);
}

TEST(ToolConfigTest, AMissingRuleFileOrPluginIsAnErrorNamingIt) {
  ToolConfig rules;
  rules.rule_files = {"/nowhere/rules.toml"};
  auto registry = BuildRegistry(rules);
  ASSERT_FALSE(registry.ok());
  EXPECT_NE(registry.status().message().find("/nowhere/rules.toml"), std::string::npos)
      << registry.status().message();
  ToolConfig plugins;
  plugins.plugins = {"/nowhere/plugin.so"};
  registry = BuildRegistry(plugins);
  ASSERT_FALSE(registry.ok());
  EXPECT_NE(registry.status().message().find("/nowhere/plugin.so"), std::string::npos)
      << registry.status().message();
}

TEST(ToolConfigTest, PathsAreMadeAbsoluteForARunThatMayResumeElsewhere) {
  ToolConfig config;
  config.rule_files = {"rules/mine.toml"};
  config.plugins = {"/abs/p.so"};
  ToolConfig made = WithAbsolutePaths(config);
  EXPECT_EQ(made.rule_files[0].front(), '/');
  EXPECT_NE(made.rule_files[0].find("rules/mine.toml"), std::string::npos);
  EXPECT_EQ(made.plugins[0], "/abs/p.so");
}

}  // namespace tools_tool_config_test
}  // namespace kernelpro::tools
