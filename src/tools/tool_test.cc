#include "tools/tool.h"

#include <gtest/gtest.h>

#include "profile/metrics.h"
#include "tools/metric_set.h"

namespace kernelpro::tools {
namespace tools_tool_test {

TEST(FormatNumberTest, StableShortDecimalText) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(42.1234), "42.1");
  EXPECT_EQ(FormatNumber(96), "96");
  EXPECT_EQ(FormatNumber(0.031234), "0.0312");
  EXPECT_EQ(FormatNumber(1234567), "1234567");
  EXPECT_EQ(FormatNumber(12.5), "12.5");
  EXPECT_EQ(FormatNumber(-3.0), "-3");
  EXPECT_EQ(FormatNumber(2.5e12), "2.50e+12");
  EXPECT_EQ(FormatQuantity(61.04, "%"), "61 %");
  EXPECT_EQ(FormatQuantity(128, "registers"), "128 registers");
}

TEST(NamesTest, ParseWhatTheyPrint) {
  for (Severity s : {Severity::kCritical, Severity::kHigh, Severity::kMedium, Severity::kLow}) {
    EXPECT_EQ(ParseSeverity(SeverityName(s)).value(), s);
  }
  EXPECT_EQ(ParseToolSource("energy").value(), ToolSource::kEnergy);
  auto bad = ParseSeverity("urgent");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("critical, high, medium, low"), std::string::npos);
}

TEST(MetricSetTest, ViewsThatAreMissingContributeNoNames) {
  profile::Metrics m;
  m.timeline = profile::TimelineSummary{};
  m.timeline->end_to_end_us = 100;
  m.timeline->gaps = {{10, 20}, {50, 30}};
  m.timeline->memcpy = {{"HtoD", 2, 4096, 3.5}, {"memset", 1, 64, 0.5}};
  MetricSet set = BuildMetricSet(m);
  EXPECT_FALSE(set.Has("sm__throughput.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_FALSE(set.Has("sass.instructions"));
  EXPECT_DOUBLE_EQ(set.Get("timeline.end_to_end_us"), 100);
  EXPECT_DOUBLE_EQ(set.Get("timeline.gap_count"), 2);
  EXPECT_DOUBLE_EQ(set.Get("timeline.gap_time_us"), 50);
  EXPECT_DOUBLE_EQ(set.Get("timeline.largest_gap_us"), 30);
  EXPECT_DOUBLE_EQ(set.Get("timeline.memcpy_count"), 2);
  EXPECT_DOUBLE_EQ(set.Get("timeline.memcpy_htod_bytes"), 4096);
  EXPECT_DOUBLE_EQ(set.Get("timeline.memset_count"), 1);
  EXPECT_EQ(set.Unit("timeline.end_to_end_us"), "us");
}

TEST(MetricSetTest, SassNamesSumTheEntryKernelsOnly) {
  profile::Metrics m;
  m.sass = profile::SassView{};
  m.sass->entry_points = {"_Z1kPf"};
  profile::SassKernel entry;
  entry.name = "_Z1kPf";
  entry.categories = {{"tensor_hmma", 4}, {"local_store", 2}};
  entry.opcodes = {{"HMMA", 4}, {"FCHK", 1}};
  entry.total_instructions = 100;
  entry.registers = 96;
  entry.stack_bytes = 16;
  profile::SassKernel helper = entry;  // a device function, not launched on its own
  helper.name = "_Z6helperv";
  m.sass->kernels = {entry, helper};
  m.sass->library_calls = {"cublasGemmEx", "cublasLtMatmul"};
  MetricSet set = BuildMetricSet(m);
  EXPECT_DOUBLE_EQ(set.Get("sass.tensor_hmma"), 4);
  EXPECT_DOUBLE_EQ(set.Get("sass.tensor_wgmma"), 0);  // every category is present
  EXPECT_DOUBLE_EQ(set.Get("sass.op.FCHK"), 1);
  EXPECT_DOUBLE_EQ(set.Get("sass.instructions"), 100);
  EXPECT_DOUBLE_EQ(set.Get("sass.kernels"), 1);
  EXPECT_DOUBLE_EQ(set.Get("sass.registers_max"), 96);
  EXPECT_DOUBLE_EQ(set.Get("sass.stack_bytes_max"), 16);
  EXPECT_DOUBLE_EQ(set.Get("sass.calls_cublas"), 2);
}

}  // namespace tools_tool_test
}  // namespace kernelpro::tools
