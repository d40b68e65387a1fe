// The energy proxy (paper Eq. 4) on counters ncu recorded on an H200, and on hand-made kernels
// for what the recordings do not show (spills, a missing counter in one kernel of several).
#include "profile/energy_proxy.h"

#include <gtest/gtest.h>

#include "profile/collect.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::profile {
namespace profile_energy_proxy_test {

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
  ASSERT_TRUE(e.proxy) << ::testing::PrintToString(e.missing);
  EXPECT_TRUE(e.missing.empty());
  EXPECT_EQ(e.proxy->kernels, 1);
  EXPECT_DOUBLE_EQ(e.proxy->terms.dram_pj, 20.0 * (67119104 + 43875328));
  // 16 sectors per request is what a coalesced warp of 16-byte loads touches (its SASS loads
  // with LDG.E.128): nothing is charged as uncoalesced.
  EXPECT_DOUBLE_EQ(e.proxy->terms.uncoalesced_pj, 0);
  EXPECT_EQ(e.proxy->inputs.baseline, "widest SASS load: 16");
  EXPECT_DOUBLE_EQ(e.proxy->terms.spills_pj, 0);
  EXPECT_DOUBLE_EQ(e.proxy->terms.instructions_pj, 3.0 * 10329125);
  EXPECT_DOUBLE_EQ(e.proxy->total_pj, 2880021615.0 - 100.0 * 2097152 * 3);
  EXPECT_NE(RenderEnergyProxy(e).find("r0, sectors of a coalesced request: widest SASS load: 16"),
            std::string::npos)
      << RenderEnergyProxy(e);
  EXPECT_EQ(EnergyProxyJson(e)["coalesced_baseline"], "widest SASS load: 16");

  // Eq. 4 as printed (--energy-proxy paper) charges the float4 loads as uncoalesced: 22 % of it.
  EnergyProxyEstimate paper = ComputeEnergyProxy(Recorded("tests/fixtures/h200-advise", "swish"),
                                                 EnergyProxyOptionsNamed("paper"));
  ASSERT_TRUE(paper.proxy);
  EXPECT_DOUBLE_EQ(paper.proxy->terms.uncoalesced_pj, 100.0 * 2097152 * (16.0 / 4 - 1));
  EXPECT_DOUBLE_EQ(paper.proxy->total_pj, 2880021615.0);
  EXPECT_EQ(paper.proxy->inputs.baseline, "Eq. 4's 4 sectors");
}

TEST(EnergyProxyTest, TheBytesTheLoadsAskedForGiveTheCoalescedBaselineExactly) {
  // ncu's requested bytes: 8-byte loads of a full warp, 256 B per request = 8 sectors. At 12
  // sectors per request, half a request's sectors beyond the 8 are the excess.
  NcuKernel k = Kernel(0, 0, 1200, 12, 0, 0, 0);
  k.values[kGlobalLoadRequests] = 100;
  k.values[kGlobalLoadBytesAsked] = 100 * 256;
  NcuView view;
  view.kernels = {k};
  EnergyProxyEstimate e = ComputeEnergyProxy(view);
  ASSERT_TRUE(e.proxy);
  EXPECT_DOUBLE_EQ(e.proxy->terms.uncoalesced_pj, 100.0 * 1200 * (12.0 / 8 - 1));
  EXPECT_EQ(e.proxy->inputs.baseline, "requested bytes (ncu): 8");
  // Without a width known anywhere: Eq. 4's 4, and it says so.
  view.kernels = {Kernel(0, 0, 1200, 12, 0, 0, 0)};
  e = ComputeEnergyProxy(view);
  EXPECT_DOUBLE_EQ(e.proxy->terms.uncoalesced_pj, 100.0 * 1200 * (12.0 / 4 - 1));
  EXPECT_EQ(e.proxy->inputs.baseline, "4 (no access width known)");
}

TEST(EnergyProxyTest, AProfileWithTheSumsButNotTheRatioStillHasAProxy) {
  // An ncu run given raw --metrics: sectors and requests, not the derived sectors per request.
  NcuKernel k = Kernel(1000, 0, 800, 0, 0, 0, 10);
  k.values.erase(kGlobalLoadSectorsPerRequest);
  k.values[kGlobalLoadRequests] = 100;  // 8 per request
  Json metrics = {{"ncu", {{"kernels", Json::array({{{"name", "k"}, {"values", k.values}}})}}}};
  EnergyProxyEstimate e = ComputeEnergyProxyFromJson(metrics, EnergyProxyOptionsNamed("paper"));
  ASSERT_TRUE(e.proxy) << ::testing::PrintToString(e.missing);
  EXPECT_DOUBLE_EQ(e.proxy->terms.uncoalesced_pj, 100.0 * 800 * (8.0 / 4 - 1));
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

  // Both forms are kept, so a run with --energy-proxy paper divides by the paper's.
  ASSERT_TRUE(a.energy_proxy_paper_pj);
  EXPECT_EQ(back->energy_proxy_paper_pj, a.energy_proxy_paper_pj);
  EXPECT_EQ(*roofline::ReferenceEnergyProxy(a, EnergyProxyOptionsNamed("paper")),
            *a.energy_proxy_paper_pj);

  // Recorded before the catalog asked for the ratio: derived from the sector and request sums.
  roofline::ReferenceAnalysis old;
  roofline::ValidateWithProfile(old, Recorded("tests/fixtures/h200", "k_strided_copy"));
  EXPECT_TRUE(old.energy_proxy_pj);
  EXPECT_TRUE(old.energy_proxy_missing.empty());
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
  // Sectors per request neither reported nor derivable (no request count): no proxy, never a
  // default.
  NcuView without;
  without.kernels = {Kernel(1, 1, 1, 4, 0, 0, 1)};
  without.kernels[0].values.erase(kGlobalLoadSectorsPerRequest);
  EnergyProxyEstimate e = ComputeEnergyProxy(without);
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
  // Eq. 4 as printed (--energy-proxy paper), whose numbers the paper's readers can check.
  EnergyProxyEstimate e = ComputeEnergyProxy(Recorded("tests/fixtures/h200-advise", "swish"),
                                             EnergyProxyOptionsNamed("paper"));
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
            "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio / r0 - 1); r0, "
            "sectors of a coalesced request: Eq. 4's 4 sectors]\n"
            "  spills        0 pJ = 80 pJ x 0 sectors "
            "[l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
            " + l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum]\n"
            "  instructions  3.099e+07 pJ (30.99 µJ) = 3 pJ x 1.033e+07 warp instructions "
            "[smsp__inst_executed.sum]\n");
}

}  // namespace profile_energy_proxy_test
}  // namespace kernelpro::profile
