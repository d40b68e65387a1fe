#include "tools/rule_tool.h"

#include <gtest/gtest.h>

#include "tools/registry.h"
#include "tools/render.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_rule_tool_test {

const std::string kExample =
    std::string(KERNELPRO_SOURCE_DIR) + "/examples/rules/memory_rules.toml";

const ProfilingTool* Named(const std::vector<std::unique_ptr<ProfilingTool>>& tools,
                           const std::string& name) {
  for (const auto& t : tools) {
    if (t->name() == name) return t.get();
  }
  return nullptr;
}

TEST(RuleToolTest, TheExampleFileLoadsAndDescribesItsTools) {
  auto tools = LoadRuleFile(kExample);
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  ASSERT_EQ(tools->size(), 2u);
  const ProfilingTool* l2 = Named(*tools, "l2_reuse");
  ASSERT_NE(l2, nullptr);
  EXPECT_EQ(l2->source(), ToolSource::kNcu);
  EXPECT_EQ(l2->priority(), 40);
  EXPECT_EQ(l2->bottlenecks(), (std::vector<roofline::Bottleneck>{roofline::Bottleneck::kMemory,
                                                                  roofline::Bottleneck::kMixed}));
  // Required by default: every metric its expressions and templates read, none of its lets.
  EXPECT_EQ(l2->required_metrics(),
            (std::vector<std::string>{"dram__bytes_read.sum", "lts__t_sector_hit_rate.pct"}));
  ASSERT_EQ(l2->thresholds().size(), 2u);
  EXPECT_EQ(l2->thresholds()[0].name, "low_hit");
  EXPECT_DOUBLE_EQ(l2->thresholds()[0].value, 50);
  EXPECT_EQ(l2->thresholds()[0].unit, "%");
}

TEST(RuleToolTest, TriggerSeverityAndTemplates) {
  auto tools = LoadRuleFile(kExample);
  ASSERT_TRUE(tools.ok());
  const ProfilingTool& l2 = *Named(*tools, "l2_reuse");
  MetricSet m =
      testing::MakeMetrics({{"lts__t_sector_hit_rate.pct", 35}, {"dram__bytes_read.sum", 512e6}});
  ToolOutput out = testing::Run(l2, m);
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);
  EXPECT_EQ(out.title, "L2 hit rate 35 % while 512 MB come from DRAM");
  ASSERT_EQ(out.recommendations.size(), 2u);
  EXPECT_EQ(out.recommendations[0].expected_improvement,
            "fewer DRAM reads, up to the 512 MB read now");
  ASSERT_EQ(out.observed.size(), 2u);
  EXPECT_EQ(out.observed[1].name, "read_mb");
  EXPECT_DOUBLE_EQ(out.observed[1].value, 512);
  EXPECT_EQ(testing::Run(l2, testing::With(m, "lts__t_sector_hit_rate.pct", 15)).severity,
            Severity::kHigh);
  // Boundaries: exactly at the threshold does not trigger (strict '<'), nor a small read.
  EXPECT_FALSE(testing::Run(l2, testing::With(m, "lts__t_sector_hit_rate.pct", 50)).triggered);
  EXPECT_FALSE(testing::Run(l2, testing::With(m, "dram__bytes_read.sum", 64e6)).triggered);
  // Overrides work like any tool's.
  ToolContext context;
  context.overrides["l2_reuse"]["low_hit"] = 30;
  EXPECT_FALSE(testing::Run(l2, m, context).triggered);
}

TEST(RuleToolTest, MissingMetricsSkipTheRule) {
  auto tools = LoadRuleFile(kExample);
  ASSERT_TRUE(tools.ok());
  ToolOutput out = testing::Run(*Named(*tools, "l2_reuse"),
                                testing::MakeMetrics({{"dram__bytes_read.sum", 1e9}}));
  EXPECT_TRUE(out.skipped);
  EXPECT_NE(out.skip_reason.find("lts__t_sector_hit_rate.pct"), std::string::npos);
}

TEST(RuleToolTest, RulesJoinARegistryAndRender) {
  auto tools = LoadRuleFile(kExample);
  ASSERT_TRUE(tools.ok());
  ToolRegistry registry;
  for (auto& t : *tools) ASSERT_TRUE(registry.Add(std::move(t)).ok());
  profile::Metrics m;
  m.ncu = profile::NcuView{};
  profile::NcuKernel k;
  k.name = "k";
  k.values = {{"launch__grid_size", 16},
              {"device__attribute_multiprocessor_count", 132},
              {"lts__t_sector_hit_rate.pct", 90},
              {"dram__bytes_read.sum", 1e6}};
  m.ncu->kernels = {k};
  m.ncu->aggregate = k;
  Analysis a = registry.Analyze(m, {});
  ASSERT_EQ(a.findings.size(), 1u);
  EXPECT_EQ(a.findings[0].tool, "grid_smaller_than_gpu");
  EXPECT_EQ(a.findings[0].severity, Severity::kHigh);
  EXPECT_NE(RenderGuidance(a).find("16 block(s) for 132 SMs"), std::string::npos);
}

TEST(RuleToolTest, BadFilesAreClearErrors) {
  struct Case {
    std::string toml, expected;
  };
  const Case cases[] = {
      {"[[tool]]\nname = \"x\"\ntrigger = \"a >\"\ntitle = \"t\"\n",
       "tool 'x': trigger: expression \"a >\""},
      {"[[tool]]\nname = \"x\"\ntitle = \"t\"\n", "tool 'x': 'trigger' is required"},
      {"[[tool]]\nname = \"x\"\ntrigger = \"1\"\ntitle = \"t\"\nsource = \"gpu\"\n",
       "unknown tool source 'gpu'"},
      {"[[tool]]\nname = \"x\"\ntrigger = \"1\"\ntitle = \"t\"\ncolour = 1\n",
       "unknown key 'colour'"},
      {"[[tool]]\nname = \"x\"\ntrigger = \"1\"\ntitle = \"t {a\"\n", "unclosed '{'"},
      {"[[tool]]\nname = \"x\"\ntrigger = \"1\"\ntitle = \"t\"\n[[tool.severity]]\nlevel = "
       "\"urgent\"\n",
       "unknown severity 'urgent'"},
      {"[[tool]]\nname = \"x\"\ntrigger = \"a\"\ntitle = \"t\"\n[tool.let]\na = \"b\"\nb = \"a\"\n",
       "cycle"},
      {"[[tool]]\nname = \"x\"\ntrigger = \"1\"\ntitle = \"t\"\n[[tool]]\nname = \"x\"\ntrigger = "
       "\"1\"\ntitle = \"t\"\n",
       "defined twice"},
      {"name = \"x\"\n", "unknown key 'name'"},
      {"[[tool]\n", "rules.toml:1:"},
  };
  for (const Case& c : cases) {
    auto tools = ParseRuleTools(c.toml, "rules.toml");
    ASSERT_FALSE(tools.ok()) << c.toml;
    EXPECT_NE(tools.status().message().find(c.expected), std::string::npos)
        << tools.status().message();
  }
  EXPECT_EQ(LoadRuleFile("/no/such/rules.toml").status().code(), Status::Code::kNotFound);
}

}  // namespace tools_rule_tool_test
}  // namespace kernelpro::tools
