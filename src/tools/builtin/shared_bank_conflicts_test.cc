#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/builtin/system_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_shared_bank_conflicts_test {

constexpr const char* kWavefrontsSt = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
constexpr const char* kMio = "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct";

// 1000 shared-memory wavefronts (800 load, 200 store), `conflicts` of them load replays.
MetricSet Shared(double conflicts, double short_scoreboard = 2, double mio = 20) {
  return testing::MakeMetrics(
      {{"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", conflicts},
       {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 0},
       {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 800},
       {kWavefrontsSt, 200},
       {"smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct", short_scoreboard},
       {kMio, mio}});
}

TEST(SharedBankConflictsToolTest, ConflictsThatStallTrigger) {
  auto tool = MakeSharedBankConflictsTool();
  ToolOutput out = testing::Run(*tool, Shared(200));
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kMedium);
  EXPECT_EQ(out.title, "Shared-memory bank conflicts stall warps: 20 % of wavefronts are replays");
  EXPECT_NE(out.summary.find("MIO-throttle stalls at 20 %"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("1.25 wavefronts per access"), std::string::npos) << out.summary;
  EXPECT_EQ(out.recommendations.size(), 4u);
  EXPECT_NE(out.recommendations[0].action.find("tile[32][33]"), std::string::npos);
  EXPECT_FALSE(out.code_example.empty());
  // The short scoreboard alone is evidence too.
  EXPECT_NE(testing::Run(*tool, Shared(200, 15, 0)).summary.find("short-scoreboard stalls at 15 %"),
            std::string::npos);
}

TEST(SharedBankConflictsToolTest, HiddenOrAbsentConflictsStayQuiet) {
  auto tool = MakeSharedBankConflictsTool();
  EXPECT_FALSE(testing::Run(*tool, Shared(0)).triggered);
  EXPECT_FALSE(testing::Run(*tool, Shared(400, 2, 1)).triggered);  // hidden: the energy tool's case
  EXPECT_FALSE(testing::Run(*tool, Shared(400, 9.9, 9.9)).triggered);
}

TEST(SharedBankConflictsToolTest, BoundariesAndSeverity) {
  auto tool = MakeSharedBankConflictsTool();
  EXPECT_FALSE(testing::Run(*tool, Shared(100)).triggered);  // 10 % exactly
  EXPECT_TRUE(testing::Run(*tool, Shared(101)).triggered);
  EXPECT_TRUE(testing::Run(*tool, Shared(400, 10, 0)).triggered);  // stall threshold is inclusive
  EXPECT_EQ(testing::Run(*tool, Shared(299)).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Shared(300)).severity, Severity::kHigh);
  EXPECT_EQ(testing::Run(*tool, Shared(600, 2, 29)).severity,
            Severity::kHigh);  // stalls too low for critical
  EXPECT_EQ(testing::Run(*tool, Shared(600, 2, 30)).severity, Severity::kCritical);
}

TEST(SharedBankConflictsToolTest, StoreWavefrontsEstimatedWhenMissing) {
  auto tool = MakeSharedBankConflictsTool();
  // 800 load wavefronts + (150 store instructions + 50 store conflicts) = 1000; 150 conflicts = 15
  // %.
  MetricSet m = testing::Without(Shared(100), kWavefrontsSt);
  m.Set("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 50);
  m.Set("smsp__sass_inst_executed_op_shared_st.sum", 150);
  ToolOutput out = testing::Run(*tool, m);
  ASSERT_TRUE(out.triggered) << out.summary;
  EXPECT_NE(out.title.find("15 %"), std::string::npos) << out.title;
  EXPECT_NE(out.summary.find("estimated from shared-store instructions"), std::string::npos)
      << out.summary;
  // Neither store counter: loads only (100 of 800 = 12.5 %).
  ToolOutput loads = testing::Run(*tool, testing::Without(Shared(100), kWavefrontsSt));
  ASSERT_TRUE(loads.triggered);
  EXPECT_NE(loads.title.find("12.5 %"), std::string::npos) << loads.title;
}

TEST(SharedBankConflictsToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeSharedBankConflictsTool();
  ToolOutput skipped = testing::Run(*tool, testing::Without(Shared(400), kMio));
  EXPECT_TRUE(skipped.skipped);
  EXPECT_NE(skipped.skip_reason.find(kMio), std::string::npos) << skipped.skip_reason;
  ToolContext c;
  c.overrides["shared_bank_conflicts"]["conflict_share"] = 50;
  EXPECT_FALSE(testing::Run(*tool, Shared(400), c).triggered);
  c.overrides["shared_bank_conflicts"]["conflict_share"] = 10;
  c.overrides["shared_bank_conflicts"]["stall"] = 25;
  EXPECT_FALSE(testing::Run(*tool, Shared(400), c).triggered);
}

// The speed tool and energy_bank_conflicts never both fire on the same counters (default
// thresholds).
TEST(SharedBankConflictsToolTest, ComplementsTheEnergyTool) {
  auto speed = MakeSharedBankConflictsTool();
  auto energy = MakeEnergyBankConflictsTool();
  for (double conflicts : {0.0, 50.0, 100.0, 101.0, 400.0, 900.0}) {
    for (double sb : {0.0, 9.9, 10.0, 30.0}) {
      for (double mio : {0.0, 9.9, 10.0, 30.0}) {
        MetricSet m = Shared(conflicts, sb, mio);
        const bool s = testing::Run(*speed, m).triggered;
        const bool e = testing::Run(*energy, m).triggered;
        EXPECT_FALSE(s && e) << conflicts << " " << sb << " " << mio;
        if (conflicts > 100) EXPECT_TRUE(s || e) << conflicts << " " << sb << " " << mio;
      }
    }
  }
}

TEST(SharedBankConflictsToolTest, Fixtures) {
  auto tool = MakeSharedBankConflictsTool();
  // linear_gelu: ~19 % replays on the transposing stores, hidden under FMA work (short scoreboard
  // 5 %, MIO 0 %): the energy tool's finding, not this one.
  auto gelu = testing::LoadFixture("h200-profile/profiles", "linear_gelu");
  ToolOutput g = RunTool(*tool, gelu.set, gelu.Context(roofline::Bottleneck::kMixed));
  EXPECT_FALSE(g.triggered) << g.summary;
  bool share_seen = false;
  for (const ObservedMetric& o : g.observed) {
    if (o.name == "bank_conflict_share_of_wavefronts") {
      share_seen = true;
      EXPECT_NEAR(o.value, 19, 0.5);
    }
  }
  EXPECT_TRUE(share_seen);
  // cuBLAS: ~0.4 % (store wavefronts estimated: the h200 recordings predate the store counter).
  auto cublas = testing::LoadFixture("h200", "p_cublas_bf16");
  ToolOutput b = RunTool(*tool, cublas.set, cublas.Context(roofline::Bottleneck::kCompute));
  EXPECT_FALSE(b.triggered) << b.summary;
  for (auto [dir, name] : {std::pair{"h200", "k_naive_matmul"},
                           {"h200", "k_wmma"},
                           {"h200", "k_swish_vec"},
                           {"h200-profile/profiles", "tril_matmul"},
                           {"h200-profile/profiles", "rms_norm"},
                           {"h200-profile/profiles", "tiny_mlp"},
                           {"h200-profile/record", "cublas_tril"},
                           {"h200-profile/record", "cp_async_copy"},
                           {"h200-profile/record", "wgmma_tile"}}) {
    auto f = testing::LoadFixture(dir, name);
    ToolOutput out = RunTool(*tool, f.set, f.Context());
    EXPECT_FALSE(out.triggered) << name << ": " << out.summary;
  }
  // The same linear_gelu counters with the MIO queue backed up: now the conflicts cost time.
  MetricSet stalled =
      testing::With(gelu.set, "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct", 25);
  ToolOutput s = RunTool(*tool, stalled, gelu.Context(roofline::Bottleneck::kMixed));
  ASSERT_TRUE(s.triggered);
  EXPECT_EQ(s.severity, Severity::kMedium);
}

}  // namespace tools_builtin_shared_bank_conflicts_test
}  // namespace kernelpro::tools
