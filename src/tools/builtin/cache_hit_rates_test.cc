#include <gtest/gtest.h>

#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools {
namespace tools_builtin_cache_hit_rates_test {

// 1e6 global-load sectors (32 MB requested), DRAM reads of 32 MB / `reuse`, the two hit rates, and
// shared-load wavefronts at `staged` % of the global-load sectors.
MetricSet Caches(double reuse, double l1, double l2, double staged = 0) {
  return testing::MakeMetrics(
      {{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1e6},
       {"dram__bytes_read.sum", 32e6 / reuse},
       {"l1tex__t_sector_hit_rate.pct", l1},
       {"lts__t_sector_hit_rate.pct", l2},
       {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 1e6 * staged / 100}});
}

ToolContext Memory() { return testing::ContextFor(roofline::Bottleneck::kMemory); }

TEST(CacheHitRatesToolTest, MissedReuseTriggers) {
  auto tool = MakeCacheHitRatesTool();
  ToolOutput l1 = testing::Run(*tool, Caches(5, 10, 90), Memory());
  ASSERT_TRUE(l1.triggered);
  EXPECT_EQ(l1.severity, Severity::kMedium);
  EXPECT_EQ(l1.title, "Reused data is re-fetched: L1 misses it (L1 10 %, L2 90 % hit rate)");
  EXPECT_NE(l1.summary.find("request 5x the bytes read from DRAM (32 MB vs 6.4 MB"),
            std::string::npos)
      << l1.summary;
  EXPECT_NE(l1.recommendations[0].action.find("shared memory"), std::string::npos);
  EXPECT_NE(l1.code_example.find("__shared__"), std::string::npos);

  ToolOutput l2 = testing::Run(*tool, Caches(5, 60, 40), Memory());
  ASSERT_TRUE(l2.triggered);
  EXPECT_EQ(l2.title, "Reused data is re-fetched: L2 misses it (L1 60 %, L2 40 % hit rate)");
  EXPECT_NE(l2.recommendations[0].action.find("block"),
            std::string::npos);  // block-order swizzle first
  EXPECT_NE(l2.recommendations[1].action.find("persistence window"), std::string::npos);
  EXPECT_NE(l2.code_example.find("GROUP_M"), std::string::npos);

  ToolOutput both = testing::Run(*tool, Caches(5, 10, 40), Memory());
  ASSERT_TRUE(both.triggered);
  EXPECT_NE(both.title.find("L1 and L2 miss it"), std::string::npos) << both.title;
  EXPECT_EQ(both.recommendations.size(), 4u);
}

TEST(CacheHitRatesToolTest, StreamingStagedOrHittingStayQuiet) {
  auto tool = MakeCacheHitRatesTool();
  // Streaming: each byte requested once; L1 0 %, L2 50 % is all a cache can do.
  EXPECT_FALSE(testing::Run(*tool, Caches(1, 0, 50), Memory()).triggered);
  // Reuse caught by the caches.
  EXPECT_FALSE(testing::Run(*tool, Caches(20, 85, 95), Memory()).triggered);
  // Tiles staged in shared memory (cp.async.cg bypasses L1): L1 ~0 % by design, L2 serves the rest.
  EXPECT_FALSE(testing::Run(*tool, Caches(12, 0, 88, 100), Memory()).triggered);
  // Not memory-heavy: compute-bound class, or no class and SM throughput leading.
  EXPECT_FALSE(
      testing::Run(*tool, Caches(5, 10, 40), testing::ContextFor(roofline::Bottleneck::kCompute))
          .triggered);
  MetricSet m = Caches(5, 10, 40);
  m.Set("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 45);
  m.Set("sm__throughput.avg.pct_of_peak_sustained_elapsed", 70);
  EXPECT_FALSE(testing::Run(*tool, m, testing::ContextFor(std::nullopt)).triggered);
  m.Set("sm__throughput.avg.pct_of_peak_sustained_elapsed", 20);
  EXPECT_TRUE(testing::Run(*tool, m, testing::ContextFor(std::nullopt)).triggered);
  EXPECT_TRUE(
      testing::Run(*tool, Caches(5, 10, 40), testing::ContextFor(roofline::Bottleneck::kMixed))
          .triggered);
}

TEST(CacheHitRatesToolTest, BoundariesAndSeverity) {
  auto tool = MakeCacheHitRatesTool();
  EXPECT_FALSE(testing::Run(*tool, Caches(2.99, 10, 40), Memory()).triggered);
  EXPECT_TRUE(testing::Run(*tool, Caches(3, 10, 40), Memory()).triggered);
  EXPECT_FALSE(testing::Run(*tool, Caches(5, 30, 90), Memory()).triggered);  // l1_low is exclusive
  EXPECT_TRUE(testing::Run(*tool, Caches(5, 29.9, 90), Memory()).triggered);
  EXPECT_FALSE(testing::Run(*tool, Caches(5, 60, 60), Memory()).triggered);  // l2_low is exclusive
  EXPECT_TRUE(testing::Run(*tool, Caches(5, 60, 59.9), Memory()).triggered);
  EXPECT_TRUE(testing::Run(*tool, Caches(5, 10, 90, 24.9), Memory()).triggered);
  EXPECT_FALSE(testing::Run(*tool, Caches(5, 10, 90, 25), Memory()).triggered);  // staged
  EXPECT_TRUE(
      testing::Run(*tool, Caches(5, 10, 40, 25), Memory()).triggered);  // staged, but L2 misses
  EXPECT_EQ(testing::Run(*tool, Caches(9.9, 10, 90), Memory()).severity, Severity::kMedium);
  EXPECT_EQ(testing::Run(*tool, Caches(10, 10, 90), Memory()).severity, Severity::kHigh);
}

TEST(CacheHitRatesToolTest, MissingMetricSkipsAndOverride) {
  auto tool = MakeCacheHitRatesTool();
  ToolOutput skipped = testing::Run(
      *tool, testing::Without(Caches(5, 10, 40), "lts__t_sector_hit_rate.pct"), Memory());
  EXPECT_TRUE(skipped.skipped);
  EXPECT_NE(skipped.skip_reason.find("lts__t_sector_hit_rate.pct"), std::string::npos)
      << skipped.skip_reason;
  ToolContext c = Memory();
  c.overrides["cache_hit_rates"]["min_reuse"] = 6;
  EXPECT_FALSE(testing::Run(*tool, Caches(5, 10, 40), c).triggered);
  c.overrides["cache_hit_rates"]["min_reuse"] = 3;
  c.overrides["cache_hit_rates"]["l1_low"] = 5;
  c.overrides["cache_hit_rates"]["l2_low"] = 30;
  EXPECT_FALSE(testing::Run(*tool, Caches(5, 10, 40), c).triggered);
}

TEST(CacheHitRatesToolTest, Fixtures) {
  auto tool = MakeCacheHitRatesTool();
  // Streaming kernels (R / D ~1) stay quiet however low their hit rates, as memory-bound and
  // unclassified.
  for (auto [dir, name] : {std::pair{"h200", "k_swish_vec"},
                           {"h200", "k_swish_scalar"},
                           {"h200", "k_strided_copy"},
                           {"h200-profile/profiles", "swish"},
                           {"h200-profile/profiles", "scaled_softmax"},
                           {"h200-profile/profiles", "rms_norm"},
                           {"h200-profile/record", "cp_async_copy"}}) {
    auto f = testing::LoadFixture(dir, name);
    for (std::optional<roofline::Bottleneck> b :
         {std::optional<roofline::Bottleneck>(roofline::Bottleneck::kMemory),
          std::optional<roofline::Bottleneck>()}) {
      ToolOutput out = RunTool(*tool, f.set, f.Context(b));
      EXPECT_FALSE(out.skipped) << name;
      EXPECT_FALSE(out.triggered) << name << ": " << out.summary;
    }
  }
  // swish: 67 MB requested, 67 MB read from DRAM: ~1x.
  auto swish = testing::LoadFixture("h200-profile/profiles", "swish");
  ToolOutput s = RunTool(*tool, swish.set, swish.Context(roofline::Bottleneck::kMemory));
  ASSERT_EQ(s.observed.size(), 6u);
  EXPECT_EQ(s.observed[2].name, "requested_per_dram_byte");
  EXPECT_NEAR(s.observed[2].value, 1, 0.05);
  // Reuse the caches catch (naive matmul: L1 87 %, L2 99 %), tiles staged in shared memory (cuBLAS,
  // CUTLASS, the tiled linear_gelu / tril_matmul / tiny_mlp): quiet even when forced to
  // memory-bound.
  for (auto [dir, name] : {std::pair{"h200", "k_naive_matmul"},
                           {"h200", "k_wmma"},
                           {"h200", "p_cublas_bf16"},
                           {"h200-profile/profiles", "linear_gelu"},
                           {"h200-profile/profiles", "tril_matmul"},
                           {"h200-profile/profiles", "tiny_mlp"},
                           {"h200-profile/record", "cublas_tril"}}) {
    auto f = testing::LoadFixture(dir, name);
    ToolOutput out = RunTool(*tool, f.set, f.Context(roofline::Bottleneck::kMemory));
    EXPECT_FALSE(out.triggered) << name << ": " << out.summary;
  }
  // linear_gelu's own counters with the shared-memory staging removed: 61x reuse at a 15 % L1 hit
  // rate.
  auto gelu = testing::LoadFixture("h200-profile/profiles", "linear_gelu");
  MetricSet unstaged =
      testing::With(gelu.set, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 0);
  ToolOutput g = RunTool(*tool, unstaged, gelu.Context(roofline::Bottleneck::kMixed));
  ASSERT_TRUE(g.triggered);
  EXPECT_EQ(g.severity, Severity::kHigh);
}

}  // namespace tools_builtin_cache_hit_rates_test
}  // namespace kernelpro::tools
