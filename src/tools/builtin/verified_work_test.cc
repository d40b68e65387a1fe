// verified_work on recorded H200 runs. The passing cases are real: the six example candidates of
// tests/fixtures/h200-advise with the Stage 1 recorded beside them. The firing cases are the same
// recordings held to a synthetic Stage 1 (inputs or FLOPs scaled up, as if the candidate had
// covered only part of a larger problem), or small records written by hand.
#include <gtest/gtest.h>

#include "roofline/reference_analysis.h"
#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/tool_testing.h"
#include "tools/work_check.h"

namespace kernelpro::tools {
namespace tools_builtin_verified_work_test {

const char* const kExamples[] = {"linear_gelu", "rms_norm", "scaled_softmax",
                                 "swish",       "tiny_mlp", "tril_matmul"};

ProblemWork RecordedStageOne(const std::string& name) {
  auto analysis = roofline::ReadReferenceAnalysisFile(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200-advise/" + name + ".analysis.json");
  EXPECT_TRUE(analysis.ok()) << name;
  return analysis.ok() ? ProblemWorkOf(*analysis) : ProblemWork{};
}

ToolOutput RunWith(const testing::Fixture& f, std::optional<ProblemWork> work,
                   ThresholdOverrides overrides = {}) {
  auto tool = MakeVerifiedWorkTool();
  ToolContext c = f.Context(std::nullopt, std::move(overrides));
  c.work = work;
  return RunTool(*tool, f.set, c);
}

// A hand-written record: one kernel's DRAM reads and FFMA count, SASS with or without HGMMA, and a
// timeline that counted that one launch.
profile::Metrics Record(double bytes_read, double ffma, bool tensor = false) {
  profile::Metrics m;
  m.ncu.emplace();
  m.ncu->kernels.resize(1);
  m.ncu->aggregate.values = {{"dram__bytes_read.sum", bytes_read},
                             {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", ffma}};
  m.sass.emplace();
  m.sass->arch = "sm_90a";
  m.sass->kernels.resize(1);
  if (tensor) m.sass->kernels[0].categories["tensor_wgmma"] = 64;
  m.timeline.emplace();
  m.timeline->kernel_count = 1;  // the one launch ncu kept
  return m;
}

ToolOutput RunOn(const profile::Metrics& record, const ProblemWork& work,
                 ThresholdOverrides overrides = {}) {
  auto tool = MakeVerifiedWorkTool();
  MetricSet set = BuildMetricSet(record);
  AnalysisOptions options;
  options.work = work;
  options.overrides = std::move(overrides);
  return RunTool(*tool, set, MakeToolContext(record, set, options));
}

TEST(VerifiedWorkToolTest, RecordedExampleCandidatesDidTheirWork) {
  for (const char* name : kExamples) {
    auto f = testing::LoadFixture("h200-advise", name);
    ProblemWork work = RecordedStageOne(name);
    ToolOutput out = RunWith(f, work);
    EXPECT_FALSE(out.skipped) << name << ": " << out.skip_reason;
    EXPECT_FALSE(out.triggered) << name << ": " << out.title;
    WorkCheck check = CheckWork(*f.record, work);
    ASSERT_TRUE(check.read_share) << name << ": " << check.read_unavailable;
    EXPECT_GT(*check.read_share, 0.5) << name;
  }
  // Real numbers worth pinning: swish reads its 67.1 MB input once; the triangular matmul reads
  // only the lower halves of A and B (52 %, just above the trigger) and, skipping zero blocks,
  // executes 18 % of the dense GEMM's FLOPs that Stage 1 counts (the problem says about a sixth).
  auto swish = testing::LoadFixture("h200-advise", "swish");
  WorkCheck s = CheckWork(*swish.record, RecordedStageOne("swish"));
  EXPECT_NEAR(*s.read_share, 1.0, 0.02);
  EXPECT_FALSE(s.flop_share) << "swish's FLOPs are estimates only";
  auto tril = testing::LoadFixture("h200-advise", "tril_matmul");
  WorkCheck t = CheckWork(*tril.record, RecordedStageOne("tril_matmul"));
  ASSERT_TRUE(t.read_share && t.flop_share) << t.read_unavailable << " / " << t.flops_unavailable;
  EXPECT_NEAR(*t.read_share, 0.52, 0.02);
  EXPECT_NEAR(*t.flop_share, 0.18, 0.01);
  EXPECT_FALSE(t.tensor_core_work);
}

TEST(VerifiedWorkToolTest, FiresWhenTheInputsWereNotRead) {
  // Synthetic Stage 1: the swish recording against a problem with four times its input.
  auto f = testing::LoadFixture("h200-advise", "swish");
  ProblemWork work = RecordedStageOne("swish");
  work.min_input_bytes *= 4;
  ToolOutput out = RunWith(f, work);
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.title.find("did not read all its inputs"), std::string::npos) << out.title;
  EXPECT_NE(out.title.find("25 %"), std::string::npos) << out.title;
  EXPECT_NE(out.summary.find("67.1 MB"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("268 MB"), std::string::npos) << out.summary;
  // At the threshold, and with it lowered, it is quiet.
  work.min_input_bytes /= 2;  // 50 % read
  EXPECT_FALSE(RunWith(f, work).triggered);
  work.min_input_bytes *= 2;
  EXPECT_FALSE(RunWith(f, work, {{"verified_work", {{"min_read_share", 20}}}}).triggered);
}

TEST(VerifiedWorkToolTest, FiresWhenTheArithmeticWasNotDone) {
  // Synthetic Stage 1: the triangular matmul's recording against four times the counted FLOPs.
  auto f = testing::LoadFixture("h200-advise", "tril_matmul");
  ProblemWork work = RecordedStageOne("tril_matmul");
  work.flops = (work.flops - work.flops_estimated) * 4 + work.flops_estimated;
  ToolOutput out = RunWith(f, work);
  ASSERT_TRUE(out.triggered);
  EXPECT_EQ(out.severity, Severity::kHigh);
  EXPECT_NE(out.title.find("did far less work than the problem needs"), std::string::npos)
      << out.title;
  EXPECT_NE(out.title.find("4.57 %"), std::string::npos) << out.title;
  EXPECT_NE(out.summary.find("68.7 GFLOP"), std::string::npos) << out.summary;
}

TEST(VerifiedWorkToolTest, HandWrittenBoundaries) {
  const double mib = 1024.0 * 1024;
  ProblemWork work{64 * mib, 2e9, 0};
  EXPECT_FALSE(RunOn(Record(64 * mib, 1e9), work).triggered);
  ToolOutput both = RunOn(Record(8 * mib, 5e7), work);
  ASSERT_TRUE(both.triggered);
  EXPECT_NE(both.title.find("12.5 %"), std::string::npos) << both.title;
  EXPECT_NE(both.title.find("5 %"), std::string::npos) << both.title;
  EXPECT_EQ(both.observed.size(), 2u);
  // FLOPs just at 10 %: quiet; just below: fires.
  EXPECT_FALSE(RunOn(Record(64 * mib, 1e8), work).triggered);
  EXPECT_TRUE(RunOn(Record(64 * mib, 0.99e8), work).triggered);
  // Inputs below 4 MiB: the read check stays quiet however little was read.
  EXPECT_FALSE(RunOn(Record(1024, 1e9), ProblemWork{3.9 * mib, 2e9, 0}).triggered);
  EXPECT_TRUE(RunOn(Record(1024, 1e9), ProblemWork{4 * mib, 2e9, 0}).triggered);
  // Only estimated FLOPs: no FLOP check, however little was executed.
  EXPECT_FALSE(RunOn(Record(64 * mib, 0), ProblemWork{64 * mib, 2e9, 2e9}).triggered);
  // The estimated part is left out of the yardstick: 1.5e8 of 1.5e9 counted is 10 %.
  EXPECT_FALSE(RunOn(Record(64 * mib, 7.5e7), ProblemWork{64 * mib, 2e9, 5e8}).triggered);
}

TEST(VerifiedWorkToolTest, TensorCoreWorkIsNotCounted) {
  const double mib = 1024.0 * 1024;
  ProblemWork work{64 * mib, 2e9, 0};
  WorkCheck check = CheckWork(Record(64 * mib, 0, /*tensor=*/true), work);
  EXPECT_TRUE(check.tensor_core_work);
  EXPECT_FALSE(check.flop_share);
  EXPECT_NE(check.flops_unavailable.find("tensor-core"), std::string::npos);
  EXPECT_FALSE(RunOn(Record(64 * mib, 0, /*tensor=*/true), work).triggered);
  // The recorded warpgroup-MMA tile (HGMMA in its SASS), held to a large synthetic GEMM.
  auto wgmma = testing::LoadFixture("h200-profile/record", "wgmma_tile");
  ProblemWork gemm{0, 1e12, 0};
  EXPECT_FALSE(RunWith(wgmma, gemm).triggered);
  EXPECT_TRUE(CheckWork(*wgmma.record, gemm).tensor_core_work);
  // No SASS view: tensor cores cannot be ruled out, so no FLOP check.
  profile::Metrics no_sass = Record(64 * mib, 0);
  no_sass.sass.reset();
  EXPECT_FALSE(CheckWork(no_sass, work).flop_share);
  EXPECT_FALSE(RunOn(no_sass, work).triggered);
}

TEST(VerifiedWorkToolTest, SilentWithoutStageOneOrCounters) {
  const double mib = 1024.0 * 1024;
  auto swish = testing::LoadFixture("h200-advise", "swish");
  ToolOutput no_stage1 = RunWith(swish, std::nullopt);
  EXPECT_FALSE(no_stage1.triggered);
  EXPECT_FALSE(no_stage1.skipped);
  // No dram__bytes_read.sum: skipped, and the reason names the counter.
  profile::Metrics record = Record(1024, 0);
  record.ncu->aggregate.values.erase("dram__bytes_read.sum");
  ToolOutput skipped = RunOn(record, ProblemWork{64 * mib, 2e9, 0});
  EXPECT_TRUE(skipped.skipped);
  EXPECT_NE(skipped.skip_reason.find("dram__bytes_read.sum"), std::string::npos);
  // No FP op counters: the read check alone.
  profile::Metrics no_flops = Record(1024, 0);
  no_flops.ncu->aggregate.values.erase("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
  WorkCheck check = CheckWork(no_flops, ProblemWork{64 * mib, 2e9, 0});
  EXPECT_FALSE(check.flop_share);
  EXPECT_NE(check.flops_unavailable.find("pred_on.sum"), std::string::npos);
  EXPECT_TRUE(RunOn(no_flops, ProblemWork{64 * mib, 2e9, 0}).triggered);
  // Nothing from Stage 1: nothing checked, nothing said.
  EXPECT_FALSE(RunOn(Record(1024, 0), ProblemWork{}).triggered);
  // No ncu view at all: skipped like every ncu tool.
  EXPECT_TRUE(RunOn(profile::Metrics{}, ProblemWork{64 * mib, 2e9, 0}).skipped);
}

TEST(VerifiedWorkToolTest, QuietWhenNcuMayHaveMissedLaunches) {
  const double mib = 1024.0 * 1024;
  profile::Metrics record = Record(1024, 0);
  record.timeline.emplace();
  record.timeline->kernel_count = 3;  // ncu kept one of three launches
  WorkCheck check = CheckWork(record, ProblemWork{64 * mib, 2e9, 0});
  EXPECT_FALSE(check.read_share);
  EXPECT_FALSE(check.flop_share);
  EXPECT_NE(check.read_unavailable.find("1 of the forward call's 3"), std::string::npos);
  EXPECT_FALSE(RunOn(record, ProblemWork{64 * mib, 2e9, 0}).triggered);
  // No timeline: kernels launched through libtorch would be invisible to ncu's sums.
  record.timeline.reset();
  check = CheckWork(record, ProblemWork{64 * mib, 2e9, 0});
  EXPECT_FALSE(check.read_share);
  EXPECT_NE(check.read_unavailable.find("no GPU timeline"), std::string::npos);
  EXPECT_FALSE(RunOn(record, ProblemWork{64 * mib, 2e9, 0}).triggered);
}

TEST(VerifiedWorkToolTest, TheLineAdvisePrints) {
  auto tril = testing::LoadFixture("h200-advise", "tril_matmul");
  std::string line = RenderWorkCheck(CheckWork(*tril.record, RecordedStageOne("tril_matmul")));
  EXPECT_EQ(line.rfind("verified work: read 17.3 MB from DRAM = 51.7 % of the 33.6 MB minimum "
                       "inputs; executed 3.14 GFLOP on CUDA cores = 18.3 % of the 17.2 GFLOP "
                       "counted (4.19 MFLOP of estimates left out)",
                       0),
            0u)
      << line;
  auto swish = testing::LoadFixture("h200-advise", "swish");
  line = RenderWorkCheck(CheckWork(*swish.record, RecordedStageOne("swish")));
  EXPECT_NE(line.find("FLOPs not checked (Stage 1's FLOPs are per-element estimates only"),
            std::string::npos)
      << line;
  EXPECT_EQ(SiQuantity(268435456, "B"), "268 MB");
  EXPECT_EQ(SiQuantity(999, "B"), "999 B");
  EXPECT_EQ(SiQuantity(999.7, "B"), "1 kB");
}

}  // namespace tools_builtin_verified_work_test
}  // namespace kernelpro::tools
