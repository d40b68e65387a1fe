// The built-in list itself: unique names, at least 20 tools, and the filter table in builtin.cc's
// header comment equal to what the tools declare.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "tools/registry.h"

namespace kernelpro::tools {
namespace tools_builtin_builtin_test {

std::string Center(const std::string& text, int width) {
  int left = (width - static_cast<int>(text.size())) / 2;
  return std::string(left, ' ') + text + std::string(width - left - text.size(), ' ');
}

std::string FilterTable(const std::vector<std::unique_ptr<ProfilingTool>>& tools) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "//   %-30s %-9s compute memory latency mixed\n", "tool",
                "source");
  out << line;
  for (const auto& tool : tools) {
    auto marks = tool->bottlenecks();
    auto mark = [&](roofline::Bottleneck b) {
      bool in = tool->source() == ToolSource::kEnergy ||
                std::find(marks.begin(), marks.end(), b) != marks.end();
      return std::string(in ? "x" : ".");
    };
    std::string row = "//   " + tool->name() + std::string(30 - tool->name().size(), ' ') + " " +
                      std::string(ToolSourceName(tool->source())) +
                      std::string(9 - ToolSourceName(tool->source()).size(), ' ') + " " +
                      Center(mark(roofline::Bottleneck::kCompute), 7) + " " +
                      Center(mark(roofline::Bottleneck::kMemory), 6) + " " +
                      Center(mark(roofline::Bottleneck::kLatency), 7) + " " +
                      Center(mark(roofline::Bottleneck::kMixed), 5);
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out << row << "\n";
  }
  return out.str();
}

TEST(BuiltinToolsTest, AtLeastTwentyUniqueToolsFromEverySource) {
  auto tools = BuiltinTools();
  EXPECT_GE(tools.size(), 20u);
  std::set<std::string> names;
  std::map<ToolSource, int> per_source;
  for (const auto& tool : tools) {
    EXPECT_TRUE(names.insert(tool->name()).second) << "duplicate " << tool->name();
    ++per_source[tool->source()];
    EXPECT_FALSE(tool->description().empty()) << tool->name();
    if (tool->source() != ToolSource::kEnergy)
      EXPECT_FALSE(tool->bottlenecks().empty()) << tool->name();
  }
  EXPECT_GE(per_source[ToolSource::kNcu], 8);
  EXPECT_GE(per_source[ToolSource::kTimeline], 5);
  EXPECT_GE(per_source[ToolSource::kSass], 2);
  EXPECT_GE(per_source[ToolSource::kEnergy], 4);
}

TEST(BuiltinToolsTest, TheFilterTableInBuiltinCcIsTrue) {
  std::ifstream in(std::string(KERNELPRO_SOURCE_DIR) + "/src/tools/builtin/builtin.cc");
  std::stringstream source;
  source << in.rdbuf();
  std::string expected = FilterTable(BuiltinTools());
  EXPECT_NE(source.str().find(expected), std::string::npos)
      << "regenerate the table in builtin.cc with scripts/filter_table; it should read:\n"
      << expected;
}

}  // namespace tools_builtin_builtin_test
}  // namespace kernelpro::tools
