#include "profile/ncu_catalog.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "profile/ncu_csv.h"

namespace kernelpro::profile {
namespace profile_ncu_catalog_test {

const std::string kH200 = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Base metric name -> metric type ("Counter", "Ratio", "Throughput") from `ncu --query-metrics
// --csv` on an H200.
std::map<std::string, std::string> H200MetricTypes() {
  std::map<std::string, std::string> types;
  for (const auto& row : SplitCsv(ReadText(kH200 + "/ncu_query_metrics.csv"))) {
    if (row.size() >= 2 && row[0] != "Metric name") types[row[0]] = row[1];
  }
  return types;
}

// ncu's suffix grammar: counters take a roll-up and optionally a rate or percentage of peak;
// throughputs take a roll-up and a percentage of peak; ratios take .pct, .ratio or .max_rate.
bool SuffixAllowed(const std::string& type, const std::string& suffix) {
  static const std::set<std::string> kRollups = {"sum", "avg", "min", "max"};
  static const std::set<std::string> kPctOfPeak = {"pct_of_peak_sustained_active",
                                                   "pct_of_peak_sustained_elapsed"};
  static const std::set<std::string> kCounterRates = {"",
                                                      "per_second",
                                                      "per_cycle_active",
                                                      "per_cycle_elapsed",
                                                      "peak_sustained",
                                                      "pct_of_peak_sustained_active",
                                                      "pct_of_peak_sustained_elapsed"};
  std::string rollup = suffix.substr(0, suffix.find('.'));
  std::string rest =
      suffix.find('.') == std::string::npos ? "" : suffix.substr(suffix.find('.') + 1);
  if (type == "Ratio") return suffix == "pct" || suffix == "ratio" || suffix == "max_rate";
  if (type == "Throughput") return kRollups.count(rollup) && kPctOfPeak.count(rest);
  if (type == "Counter") return kRollups.count(rollup) && kCounterRates.count(rest);
  return false;
}

TEST(NcuCatalogTest, EveryMetricExistsOnTheH200) {
  std::map<std::string, std::string> types = H200MetricTypes();
  ASSERT_GT(types.size(), 3000u) << "the query fixture did not parse";
  for (const NcuMetric& metric : NcuMetricCatalog()) {
    const std::string& name = metric.name;
    if (name.rfind("launch__", 0) == 0) {
      // Launch statistics are not listed by --query-metrics but are always available; they take
      // no suffix.
      EXPECT_EQ(name.find('.'), std::string::npos) << name;
      continue;
    }
    std::size_t dot = name.find('.');
    ASSERT_NE(dot, std::string::npos) << name << " has no roll-up or ratio suffix";
    std::string base = name.substr(0, dot);
    auto type = types.find(base);
    ASSERT_NE(type, types.end()) << base << " is not a metric on the H200";
    EXPECT_TRUE(SuffixAllowed(type->second, name.substr(dot + 1)))
        << name << ": suffix not valid for a " << type->second;
  }
}

TEST(NcuCatalogTest, LeavesOutHopperOnlyCountersSoAmpereRunsDoNotAbort) {
  for (const NcuMetric& metric : NcuMetricCatalog()) {
    EXPECT_EQ(metric.name.find("gmma"), std::string::npos) << metric.name;
    EXPECT_EQ(metric.name.find("_tma"), std::string::npos) << metric.name;
    EXPECT_EQ(metric.name.find("memory_dependency"), std::string::npos) << metric.name;
  }
}

TEST(NcuCatalogTest, SixCategoriesEachWithEntriesAndUniqueNames) {
  const std::set<std::string> kCategories = {"throughput",  "memory",       "occupancy",
                                             "warp_stalls", "instructions", "tensor"};
  std::map<std::string, int> per_category;
  std::set<std::string> names;
  for (const NcuMetric& metric : NcuMetricCatalog()) {
    EXPECT_TRUE(kCategories.count(metric.category)) << metric.name << ": " << metric.category;
    EXPECT_TRUE(names.insert(metric.name).second) << "duplicate: " << metric.name;
    EXPECT_TRUE(metric.aggregation == "sum" || metric.aggregation == "mean") << metric.name;
    EXPECT_FALSE(metric.description.empty()) << metric.name;
    EXPECT_EQ(metric.name.find_first_of(" ,\t"), std::string::npos) << metric.name;
    ++per_category[metric.category];
  }
  for (const std::string& category : kCategories) {
    EXPECT_GT(per_category[category], 0) << category;
  }
  EXPECT_GE(NcuMetricCatalog().size(), 55u);
  // Bounded: every counter costs ncu replay passes (71: the loads' requested bytes for Eq. 4's
  // coalesced baseline joined the 70, a SASS counter beside the FLOP counters already there).
  EXPECT_LE(NcuMetricCatalog().size(), 71u);
}

TEST(NcuCatalogTest, ArgumentListsEveryMetricOnceInCatalogOrder) {
  std::vector<std::string> parts;
  std::stringstream argument(NcuMetricArgument());
  for (std::string part; std::getline(argument, part, ',');) parts.push_back(part);
  ASSERT_EQ(parts.size(), NcuMetricCatalog().size());
  for (std::size_t i = 0; i < parts.size(); ++i) EXPECT_EQ(parts[i], NcuMetricCatalog()[i].name);
}

TEST(NcuCatalogTest, FindsByExactName) {
  const NcuMetric* duration = FindNcuMetric("gpu__time_duration.sum");
  ASSERT_NE(duration, nullptr);
  EXPECT_EQ(duration->category, "throughput");
  EXPECT_EQ(duration->aggregation, "sum");
  const NcuMetric* occupancy = FindNcuMetric(kNcuAchievedOccupancyPct);
  ASSERT_NE(occupancy, nullptr);
  EXPECT_EQ(occupancy->category, "occupancy");
  EXPECT_EQ(occupancy->aggregation, "mean");
  EXPECT_EQ(FindNcuMetric("gpu__time_duration"), nullptr);  // a base name is not a metric
  EXPECT_EQ(FindNcuMetric(""), nullptr);
}

TEST(NcuCatalogTest, MemoryDependencyStallIsTheLongScoreboardOnHopper) {
  // The paper's metric is gone on Hopper; the catalog says what replaces it.
  std::map<std::string, std::string> types = H200MetricTypes();
  EXPECT_EQ(types.count("smsp__warp_issue_stalled_memory_dependency_per_warp_active"), 0u);
  EXPECT_EQ(FindNcuMetric("smsp__warp_issue_stalled_memory_dependency_per_warp_active.pct"),
            nullptr);
  EXPECT_EQ(kNcuMemoryDependencyStall,
            "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct");
  const NcuMetric* stall = FindNcuMetric(kNcuMemoryDependencyStall);
  ASSERT_NE(stall, nullptr);
  EXPECT_EQ(stall->category, "warp_stalls");
  EXPECT_NE(stall->description.find("memory_dependency"), std::string::npos);
}

TEST(NcuCatalogTest, ToolMetricNamesAreInTheCatalogAndInRealNcuOutput) {
  // The H200 fixture's header is ncu's own spelling of each column.
  std::vector<std::vector<std::string>> rows =
      SplitCsv(ReadText(kH200 + "/k_naive_matmul.ncu.csv"));
  std::set<std::string> columns;
  for (const auto& row : rows) {
    if (!row.empty() && row[0] == "ID") columns.insert(row.begin(), row.end());
  }
  ASSERT_GT(columns.size(), 400u);
  for (std::string_view name : {kNcuDuration,
                                kNcuSmThroughputPct,
                                kNcuMemoryThroughputPct,
                                kNcuDramThroughputPct,
                                kNcuDramBytesRead,
                                kNcuDramBytesWrite,
                                kNcuGlobalLoadSectors,
                                kNcuGlobalLoadRequests,
                                kNcuGlobalStoreSectors,
                                kNcuGlobalStoreRequests,
                                kNcuLocalLoadSectors,
                                kNcuLocalStoreSectors,
                                kNcuAchievedOccupancyPct,
                                kNcuRegistersPerThread,
                                kNcuInstructionsExecuted,
                                kNcuThreadsPerInstruction,
                                kNcuIssueActivePct,
                                kNcuEligibleWarpsPerCycle,
                                kNcuTensorPipePct,
                                kNcuLongScoreboardStall,
                                kNcuShortScoreboardStall,
                                kNcuBarrierStall,
                                kNcuBranchResolvingStall}) {
    EXPECT_NE(FindNcuMetric(name), nullptr) << name;
    EXPECT_TRUE(columns.count(std::string(name))) << name << " is not a column ncu printed";
  }
}

TEST(NcuCatalogTest, PercentagesRatiosRatesAndLaunchPropertiesAverageCountsAddUp) {
  for (const NcuMetric& metric : NcuMetricCatalog()) {
    const std::string& name = metric.name;
    std::set<std::string> parts;
    std::stringstream pieces(name);
    for (std::string piece; std::getline(pieces, piece, '_');) {
      std::stringstream dotted(piece);
      for (std::string part; std::getline(dotted, part, '.');) parts.insert(part);
    }
    bool is_rate = parts.count("pct") || parts.count("ratio") || parts.count("per") ||
                   name.rfind("launch__", 0) == 0;
    EXPECT_EQ(metric.aggregation, is_rate ? "mean" : "sum") << name;
    // The fallback rule for metrics outside the catalog agrees with the catalog.
    EXPECT_EQ(NcuAggregation(name + "_not_in_catalog", ""), metric.aggregation) << name;
  }
}

TEST(NcuCatalogTest, AggregationOfMetricsOutsideTheCatalog) {
  EXPECT_EQ(NcuAggregation("dram__sectors_read.sum", "sector"), "sum");
  EXPECT_EQ(NcuAggregation("sass__inst_executed_global_loads", "inst"), "sum");
  EXPECT_EQ(NcuAggregation("gpu__time_duration.avg", "ns"), "sum");  // "duration" is no ratio
  EXPECT_EQ(NcuAggregation("sm__maximum_warps_avg_per_active_cycle", "warp"), "mean");
  EXPECT_EQ(NcuAggregation("lts__t_sectors.avg.pct_of_peak_sustained_elapsed", "%"), "mean");
  EXPECT_EQ(NcuAggregation("dram__cycles_elapsed.avg.per_second", "hz"), "mean");
  EXPECT_EQ(NcuAggregation("launch__grid_size", ""), "mean");
  EXPECT_EQ(NcuAggregation("launch__shared_mem_per_block", "byte/block"), "mean");
  EXPECT_EQ(NcuAggregation("device__attribute_clock_rate", ""), "mean");
  EXPECT_EQ(NcuAggregation("some__new_rate", "byte/second"), "mean");
  // Catalog entries win over the unit.
  EXPECT_EQ(NcuAggregation("gpu__time_duration.sum", "%"), "sum");
}

}  // namespace profile_ncu_catalog_test
}  // namespace kernelpro::profile
