// The energy proxy (paper Eq. 4) on counters ncu recorded on an H200, and on hand-made kernels
// for what the recordings do not show (spills, a missing counter in one kernel of several).
#include "profile/energy_proxy.h"

#include <gtest/gtest.h>

#include "profile/collect.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::profile {
namespace {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

Metrics Recorded(const std::string& dir, const std::string& name) {
  return CollectFromArtifacts(ArtifactsIn(kRoot + "/" + dir, name));
}

NcuKernel Kernel(double read, double write, double ld_sectors, double per_request, double local_ld,
                 double local_st, double instructions) {
  NcuKernel k;
  k.values = {{kDramBytesRead, read},
              {kDramBytesWrite, write},
              {kGlobalLoadSectors, ld_sectors},
              {kGlobalLoadSectorsPerRequest, per_request},
              {kLocalLoadSectors, local_ld},
              {kLocalStoreSectors, local_st},
              {kInstructionsExecuted, instructions}};
  return k;
}

TEST(EnergyProxyTest, SwishCandidateOnTheH200HasEachTermFromItsCounters) {
  // swish_vec4_kernel: 67,119,104 B read, 43,875,328 B written, 2,097,152 load sectors at 16 per
  // request (float4 loads), no local memory, 10,329,125 warp instructions.
  EnergyProxyEstimate e = ComputeEnergyProxy(Recorded("tests/fixtures/h200-advise", "swish"));
  ASSERT_TRUE(e.proxy) << testing::PrintToString(e.missing);
  EXPECT_TRUE(e.missing.empty());
  EXPECT_EQ(e.proxy->kernels, 1);
  EXPECT_DOUBLE_EQ(e.proxy->terms.dram_pj, 20.0 * (67119104 + 43875328));
  EXPECT_DOUBLE_EQ(e.proxy->terms.uncoalesced_pj, 100.0 * 2097152 * (16.0 / 4 - 1));
  EXPECT_DOUBLE_EQ(e.proxy->terms.spills_pj, 0);
  EXPECT_DOUBLE_EQ(e.proxy->terms.instructions_pj, 3.0 * 10329125);
  EXPECT_DOUBLE_EQ(e.proxy->total_pj, 2880021615.0);
}

TEST(EnergyProxyTest, AReferenceOfSeveralKernelsSumsThem) {
  // tril_matmul's reference: a CUTLASS SGEMM (4 sectors per request: nothing uncoalesced) and
  // at::native's triu_tril kernel (7.79 per request).
  EnergyProxyEstimate e =
      ComputeEnergyProxy(Recorded("tests/fixtures/h200-profile/record", "tril_matmul_reference"));
  ASSERT_TRUE(e.proxy);
  EXPECT_EQ(e.proxy->kernels, 2);
  EXPECT_DOUBLE_EQ(e.proxy->inputs.dram_bytes, 33630720.0 + 2409472 + 8464128 + 47360);
  EXPECT_NEAR(e.proxy->terms.uncoalesced_pj, 100.0 * 526336 * (7.79 / 4 - 1), 1);
  EXPECT_DOUBLE_EQ(e.proxy->terms.instructions_pj, 3.0 * (301505536.0 + 8290112));
  EXPECT_NEAR(e.proxy->total_pj, 1625320448.0 + 244970432.0, 1);
}

TEST(EnergyProxyTest, StageOneKeepsTheReferencesProxyWithItsAnalysis) {
  // What `optimize --energy` divides by: Stage 1's ncu profile of the reference, kept in
  // stage1.json (and the run store) so a resumed run has it too.
  roofline::ReferenceAnalysis a;
  roofline::ValidateWithProfile(
      a, Recorded("tests/fixtures/h200-profile/record", "tril_matmul_reference"));
  ASSERT_TRUE(a.energy_proxy_pj);
  EXPECT_NEAR(*a.energy_proxy_pj, 1625320448.0 + 244970432.0, 1);
  auto back = roofline::ReferenceAnalysisFromJson(roofline::ToJson(a));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->energy_proxy_pj, a.energy_proxy_pj);

  roofline::ReferenceAnalysis old;
  roofline::ValidateWithProfile(old, Recorded("tests/fixtures/h200", "k_strided_copy"));
  EXPECT_FALSE(old.energy_proxy_pj);
  EXPECT_EQ(old.energy_proxy_missing, std::vector<std::string>{kGlobalLoadSectorsPerRequest});
  EXPECT_FALSE(roofline::ToJson(roofline::ReferenceAnalysis{}).contains("energy_proxy_pj"))
      << "an analysis without a profile reads as it always did";
}

TEST(EnergyProxyTest, UncoalescedLoadsArePricedPerKernelNotOnAMeanRatio) {
  NcuView ncu;
  ncu.kernels = {Kernel(0, 0, 1000, 4, 0, 0, 0), Kernel(0, 0, 1000, 12, 0, 0, 0)};
  EnergyProxyEstimate e = ComputeEnergyProxy(ncu);
  ASSERT_TRUE(e.proxy);
  // Only the second kernel is uncoalesced: 1000 sectors · (12/4 − 1) · 100 pJ.
  EXPECT_DOUBLE_EQ(e.proxy->terms.uncoalesced_pj, 200000);
  // Fewer than 4 sectors per request (narrow loads) costs nothing extra rather than a credit.
  ncu.kernels = {Kernel(0, 0, 1000, 2, 0, 0, 0)};
  EXPECT_DOUBLE_EQ(ComputeEnergyProxy(ncu).proxy->terms.uncoalesced_pj, 0);
}

TEST(EnergyProxyTest, SpillsCountLocalLoadsAndStores) {
  NcuView ncu;
  ncu.kernels = {Kernel(100, 50, 0, 4, 30, 10, 1000)};
  EnergyProxyEstimate e = ComputeEnergyProxy(ncu);
  ASSERT_TRUE(e.proxy);
  EXPECT_DOUBLE_EQ(e.proxy->terms.dram_pj, 3000);
  EXPECT_DOUBLE_EQ(e.proxy->terms.spills_pj, 80.0 * 40);
  EXPECT_DOUBLE_EQ(e.proxy->terms.instructions_pj, 3000);
  EXPECT_DOUBLE_EQ(e.proxy->total_pj, 3000 + 3200 + 3000);
}

TEST(EnergyProxyTest, AMissingCounterGivesNoProxyAndIsNamed) {
  // Recorded before the catalog asked for sectors per request: no proxy, never a default.
  EnergyProxyEstimate e = ComputeEnergyProxy(Recorded("tests/fixtures/h200", "k_strided_copy"));
  EXPECT_FALSE(e.proxy);
  EXPECT_EQ(e.missing, std::vector<std::string>{kGlobalLoadSectorsPerRequest});
  EXPECT_TRUE(EnergyProxyJson(e).is_null());
  EXPECT_EQ(RenderEnergyProxy(e),
            "Energy proxy: none (ncu did not report "
            "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio)\n");

  // One kernel of two without a counter is enough to refuse.
  NcuView ncu;
  ncu.kernels = {Kernel(1, 1, 1, 4, 0, 0, 1), Kernel(1, 1, 1, 4, 0, 0, 1)};
  ncu.kernels[1].values.erase(kLocalStoreSectors);
  EXPECT_EQ(ComputeEnergyProxy(ncu).missing, std::vector<std::string>{kLocalStoreSectors});

  // No ncu view at all: every counter is missing.
  EXPECT_EQ(ComputeEnergyProxy(Metrics{}).missing, EnergyProxyCounters());
}

TEST(EnergyProxyTest, TheRunStoresJsonFormGivesTheSameProxy) {
  const Metrics metrics = Recorded("tests/fixtures/h200-advise", "swish");
  EnergyProxyEstimate e = ComputeEnergyProxyFromJson(ToJson(metrics));
  ASSERT_TRUE(e.proxy);
  EXPECT_DOUBLE_EQ(e.proxy->total_pj, ComputeEnergyProxy(metrics).proxy->total_pj);
  EXPECT_EQ(ComputeEnergyProxyFromJson(Json::object()).missing, EnergyProxyCounters());
}

TEST(EnergyProxyTest, ReductionIsReferenceOverCandidate) {
  EXPECT_DOUBLE_EQ(*EnergyReduction(300, 100), 3.0);
  EXPECT_FALSE(EnergyReduction(300, 0));
  EXPECT_FALSE(EnergyReduction(0, 100));
}

TEST(EnergyProxyTest, JsonAndTextShowTheFourTerms) {
  EnergyProxyEstimate e = ComputeEnergyProxy(Recorded("tests/fixtures/h200-advise", "swish"));
  Json j = EnergyProxyJson(e);
  EXPECT_DOUBLE_EQ(j["total_pj"].get<double>(), 2880021615.0);
  EXPECT_DOUBLE_EQ(j["terms"]["dram"].get<double>(), 2219888640.0);
  EXPECT_DOUBLE_EQ(j["terms"]["uncoalesced"].get<double>(), 629145600.0);
  EXPECT_DOUBLE_EQ(j["terms"]["spills"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["terms"]["instructions"].get<double>(), 30987375.0);
  EXPECT_EQ(RenderEnergyProxy(e),
            "Energy proxy (paper Eq. 4, from ncu counters, 1 kernel): 2.88e+09 pJ (2880 µJ)\n"
            "  dram          2.22e+09 pJ (2220 µJ) = 20 pJ/B x 1.11e+08 B "
            "[dram__bytes_read.sum + dram__bytes_write.sum]\n"
            "  uncoalesced   6.291e+08 pJ (629.1 µJ) = 100 pJ x 6.291e+06 excess of 2.097e+06 "
            "load sectors [l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum x max(0, "
            "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio / 4 - 1)]\n"
            "  spills        0 pJ = 80 pJ x 0 sectors "
            "[l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
            " + l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum]\n"
            "  instructions  3.099e+07 pJ (30.99 µJ) = 3 pJ x 1.033e+07 warp instructions "
            "[smsp__inst_executed.sum]\n");
}

}  // namespace
}  // namespace kernelpro::profile
