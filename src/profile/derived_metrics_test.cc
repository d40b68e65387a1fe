// Derived ncu metrics from the sums they are made of, when ncu printed the sums only.
#include "profile/derived_metrics.h"

#include <gtest/gtest.h>

#include "profile/energy_proxy.h"
#include "profile/ncu_csv.h"

namespace kernelpro::profile {
namespace profile_derived_metrics_test {

// An ncu CSV of one kernel with the global-load sums and no sectors-per-request ratio, as
// `ncu --metrics <sums>` prints it.
constexpr char kSumsOnly[] =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
    "\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\","
    "\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"gpu__time_duration.sum\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"sector\",\"nsecond\"\n"
    "\"0\",\"7\",\"python3\",\"127.0.0.1\",\"k\",\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\","
    "\"0\",\"9.0\",\"1,000\",\"16,000\",\"2,000\"\n";

TEST(DerivedMetricsTest, SectorsPerRequestComeFromTheSumsWithANote) {
  Result<NcuView> view = ParseNcuCsv(kSumsOnly);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->kernels.size(), 1u);
  const char* ratio = "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio";
  EXPECT_DOUBLE_EQ(view->kernels[0].values.at(ratio), 16);
  EXPECT_DOUBLE_EQ(view->aggregate.values.at(ratio), 16);
  ASSERT_EQ(view->notes.size(), 1u);
  EXPECT_EQ(view->notes[0],
            std::string("derived ") + ratio +
                " = l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum: ncu did not report it");
}

TEST(DerivedMetricsTest, AReportedValueIsNeverReplacedAndAZeroDivisorDerivesNothing) {
  NcuKernel k;
  k.values = {{"smsp__thread_inst_executed.sum", 3200},
              {"smsp__inst_executed.sum", 100},
              {"smsp__thread_inst_executed_per_inst_executed.ratio", 31},
              {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 50},
              {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0}};
  EXPECT_TRUE(DeriveMissingMetrics(k).empty());
  EXPECT_DOUBLE_EQ(k.values.at("smsp__thread_inst_executed_per_inst_executed.ratio"), 31);
  k.values.erase("smsp__thread_inst_executed_per_inst_executed.ratio");
  EXPECT_EQ(DeriveMissingMetrics(k),
            std::vector<std::string>{"smsp__thread_inst_executed_per_inst_executed.ratio"});
  EXPECT_DOUBLE_EQ(k.values.at("smsp__thread_inst_executed_per_inst_executed.ratio"), 32);
}

}  // namespace profile_derived_metrics_test
}  // namespace kernelpro::profile
