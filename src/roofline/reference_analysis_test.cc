#include "roofline/reference_analysis.h"

#include <gtest/gtest.h>

#include "profile/collect.h"
#include "profile/ncu_catalog.h"

namespace kernelpro::roofline {
namespace roofline_reference_analysis_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;
GpuSpec H200() { return *FindGpu("NVIDIA H200"); }

// What the worker's analyze step returns, reduced to the fields the analysis reads.
Json WorkerResult(const std::string& category, const std::string& dtype, double flops,
                  double in_bytes, double out_bytes, double estimated = 0) {
  return Json{{"status", "ok"},
              {"device", "cpu"},
              {"device_name", nullptr},
              {"operations", Json::array({{{"category", category},
                                           {"op", category == "gemm" ? "mm" : "mul"},
                                           {"count", 1},
                                           {"flops", flops}}})},
              {"dominant_category", category},
              {"dominant_dtype", dtype},
              {"flops", flops},
              {"flops_estimated", estimated},
              {"flops_source", "shape formulas"},
              {"input_bytes", in_bytes},
              {"parameter_bytes", 0},
              {"output_bytes", out_bytes},
              {"min_bytes", in_bytes + out_bytes},
              {"flops_notes", Json::array()}};
}

TEST(RooflineTest, ElementwiseFp32On4096SquaredIsMemoryBoundOnH200) {
  const double n = 4096.0 * 4096.0;
  auto a =
      AnalyzeReference(WorkerResult("elementwise", "float32", n, 4 * n, 4 * n, n), "p.py", H200());
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->precision, "fp32");
  EXPECT_DOUBLE_EQ(a->peak_flops, 67e12);
  EXPECT_DOUBLE_EQ(a->min_bytes, 134217728);
  EXPECT_DOUBLE_EQ(a->roofline.arithmetic_intensity, 0.125);
  EXPECT_NEAR(a->roofline.ridge_point, 67e12 / 4.8e12, 1e-12);        // 13.958 FLOP/B
  EXPECT_NEAR(a->roofline.memory_time_s, 134217728 / 4.8e12, 1e-15);  // 27.96 us
  EXPECT_NEAR(a->roofline.compute_time_s, n / 67e12, 1e-15);
  EXPECT_DOUBLE_EQ(a->roofline.attainable_time_s, a->roofline.memory_time_s);
  EXPECT_NEAR(a->roofline.attainable_flops, 0.125 * 4.8e12, 1);  // intensity x bandwidth
  EXPECT_EQ(a->bottleneck, Bottleneck::kMemory);
  EXPECT_EQ(a->confidence, "theoretical");
  EXPECT_NE(a->roofline.reason.find("111.7x below the ridge point 13.96"), std::string::npos)
      << a->roofline.reason;
  // Most of its FLOPs are per-element estimates: said so.
  EXPECT_NE(a->notes.back().find("estimates"), std::string::npos);
}

TEST(RooflineTest, Fp16Gemm4096CubedIsComputeBoundOnTensorCores) {
  const double n = 4096;
  auto a = AnalyzeReference(
      WorkerResult("gemm", "float16", 2 * n * n * n, 2 * n * n * 2, n * n * 2), "p.py", H200());
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->precision, "fp16_tensor");
  EXPECT_DOUBLE_EQ(a->peak_flops, 989.5e12);
  EXPECT_NEAR(a->roofline.arithmetic_intensity, 4096.0 / 3, 1e-9);               // 1365.33 FLOP/B
  EXPECT_NEAR(a->roofline.ridge_point, 989.5 / 4.8, 1e-9);                       // 206.15 FLOP/B
  EXPECT_NEAR(a->roofline.attainable_time_s, 137438953472.0 / 989.5e12, 1e-15);  // 138.9 us
  EXPECT_DOUBLE_EQ(a->roofline.attainable_flops, 989.5e12);
  EXPECT_EQ(a->bottleneck, Bottleneck::kCompute);
}

TEST(RooflineTest, TinyOpIsLatencyBound) {
  auto a =
      AnalyzeReference(WorkerResult("elementwise", "float32", 1024, 4096, 4096), "p.py", H200());
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(a->roofline.attainable_time_s, 8192 / 4.8e12, 1e-18);  // 1.7 ns
  EXPECT_EQ(a->bottleneck, Bottleneck::kLatency);
  EXPECT_NE(a->roofline.reason.find("below 5.0 us"), std::string::npos) << a->roofline.reason;
}

TEST(RooflineTest, IntensityNearTheRidgeIsMixedAndTheBandsAreConfigurable) {
  const double ridge = 67e12 / 4.8e12;
  const double bytes = 1e9;
  EXPECT_EQ(ComputeRoofline(ridge * bytes, bytes, 67e12, 4.8e12).bottleneck, Bottleneck::kMixed);
  EXPECT_EQ(ComputeRoofline(1.9 * ridge * bytes, bytes, 67e12, 4.8e12).bottleneck,
            Bottleneck::kMixed);
  EXPECT_EQ(ComputeRoofline(0.55 * ridge * bytes, bytes, 67e12, 4.8e12).bottleneck,
            Bottleneck::kMixed);
  EXPECT_EQ(ComputeRoofline(2.1 * ridge * bytes, bytes, 67e12, 4.8e12).bottleneck,
            Bottleneck::kCompute);
  EXPECT_EQ(ComputeRoofline(0.45 * ridge * bytes, bytes, 67e12, 4.8e12).bottleneck,
            Bottleneck::kMemory);
  RooflineOptions narrow;
  narrow.mixed_factor = 1.1;
  EXPECT_EQ(ComputeRoofline(1.9 * ridge * bytes, bytes, 67e12, 4.8e12, narrow).bottleneck,
            Bottleneck::kCompute);
  RooflineOptions patient;
  patient.latency_threshold_s = 1;  // everything under a second is "latency"
  EXPECT_EQ(ComputeRoofline(ridge * bytes, bytes, 67e12, 4.8e12, patient).bottleneck,
            Bottleneck::kLatency);
  // No bytes at all: pure arithmetic.
  EXPECT_EQ(ComputeRoofline(1e12, 0, 67e12, 4.8e12).bottleneck, Bottleneck::kCompute);
}

TEST(RooflineTest, PrecisionFollowsTheDominantOperationAndTf32IsOptIn) {
  GpuSpec h200 = H200(), a100 = *FindGpu("a100-80gb");
  std::string why;
  EXPECT_EQ(ChoosePrecision("gemm", "float32", h200, false, &why), Precision::kFp32);
  EXPECT_NE(why.find("TF32 not allowed"), std::string::npos);
  EXPECT_EQ(ChoosePrecision("gemm", "float32", h200, true), Precision::kTf32Tensor);
  EXPECT_EQ(ChoosePrecision("convolution", "bfloat16", h200, false), Precision::kBf16Tensor);
  EXPECT_EQ(ChoosePrecision("gemm", "float8_e4m3fn", h200, false), Precision::kFp8Tensor);
  EXPECT_EQ(ChoosePrecision("gemm", "float8_e4m3fn", a100, false, &why), Precision::kFp16Tensor);
  EXPECT_NE(why.find("no fp8"), std::string::npos);
  EXPECT_EQ(ChoosePrecision("gemm", "int8", h200, false), Precision::kInt8Tensor);
  EXPECT_EQ(ChoosePrecision("gemm", "float64", h200, false), Precision::kFp64Tensor);
  EXPECT_EQ(ChoosePrecision("gemm", "float64", *FindGpu("l4"), false), Precision::kFp64);
  EXPECT_EQ(ChoosePrecision("elementwise", "float16", h200, false), Precision::kFp16);
  EXPECT_EQ(ChoosePrecision("softmax", "bfloat16", h200, false), Precision::kBf16);
  EXPECT_EQ(ChoosePrecision("reduction", "float32", h200, true), Precision::kFp32);
  EXPECT_EQ(ChoosePrecision("", "", h200, false), Precision::kFp32);
}

// The tril_matmul reference (2048^3 fp32 GEMM + tril) and its real ncu profile on the H200.
ReferenceAnalysis TrilMatmul() {
  Json w = WorkerResult("gemm", "float32", 17184063488.0, 33554432, 16777216, 4194304);
  return *AnalyzeReference(w, "problems/tril_matmul/problem.py", H200());
}

profile::Metrics TrilMatmulProfile() {
  profile::ArtifactPaths paths;
  paths.ncu_csv = kRoot + "/tests/fixtures/h200-profile/record/tril_matmul_reference.ncu.csv";
  return profile::CollectFromArtifacts(paths);
}

TEST(ReferenceAnalysisTest, TrilMatmulOnH200IsComputeBoundAndNcuAgrees) {
  ReferenceAnalysis a = TrilMatmul();
  EXPECT_NEAR(a.roofline.arithmetic_intensity, 17184063488.0 / 50331648, 1e-9);  // 341.4 FLOP/B
  EXPECT_EQ(a.roofline.bottleneck, Bottleneck::kCompute);
  EXPECT_NEAR(a.roofline.attainable_time_s, 17184063488.0 / 67e12, 1e-15);  // 256.5 us
  profile::Metrics m = TrilMatmulProfile();
  ASSERT_TRUE(m.ncu.has_value());
  ValidateWithProfile(a, m);
  ASSERT_TRUE(a.measured.has_value());
  EXPECT_EQ(a.measured->kernel_count, 2);
  EXPECT_NEAR(a.measured->sm_pct, 83.79, 0.01);
  EXPECT_NEAR(a.measured->memory_pct, 46.79, 0.01);
  EXPECT_NEAR(a.measured->duration_s, 353.44e-6, 1e-9);
  EXPECT_EQ(a.measured->bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(a.bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(a.confidence, "high");
  RooflinePosition p = PositionAgainstRoofline(a, a.measured->duration_s);
  EXPECT_NEAR(p.fraction_of_bound, (17184063488.0 / 67e12) / 353.44e-6, 1e-12);  // 0.726
  EXPECT_NE(p.summary.find("reaches 73 % of the attainable bound"), std::string::npos) << p.summary;
  std::string text = RenderReferenceAnalysis(a);
  EXPECT_NE(text.find("compute-bound"), std::string::npos) << text;
  EXPECT_NE(text.find("confidence  high"), std::string::npos) << text;
}

profile::NcuView Measured(double sm, double mem) {
  profile::NcuView v;
  v.aggregate.values[std::string(profile::kNcuSmThroughputPct)] = sm;
  v.aggregate.values[std::string(profile::kNcuMemoryThroughputPct)] = mem;
  v.aggregate.values[std::string(profile::kNcuDuration)] = 1000;
  v.kernels.push_back(v.aggregate);
  return v;
}

TEST(ReferenceAnalysisTest, MeasuredClassRules) {
  EXPECT_EQ(MeasureFromNcu(Measured(84, 47))->bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(MeasureFromNcu(Measured(30, 90))->bottleneck, Bottleneck::kMemory);
  EXPECT_EQ(MeasureFromNcu(Measured(75, 70))->bottleneck, Bottleneck::kMixed);
  EXPECT_EQ(MeasureFromNcu(Measured(20, 45))->bottleneck, Bottleneck::kLatency);
  EXPECT_FALSE(MeasureFromNcu(profile::NcuView{}).has_value());
}

TEST(ReferenceAnalysisTest, DisagreementKeepsTheTheoreticalClassAndSaysWhy) {
  profile::Metrics m;
  m.ncu = Measured(25, 88);  // ncu says memory, theory says compute
  ReferenceAnalysis a = TrilMatmul();
  ValidateWithProfile(a, m);
  EXPECT_EQ(a.bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(a.measured->bottleneck, Bottleneck::kMemory);
  EXPECT_EQ(a.confidence, "low");
  EXPECT_NE(a.rationale.find("Keeping the theoretical class"), std::string::npos) << a.rationale;
  EXPECT_NE(a.rationale.find("move far more data than the minimum"), std::string::npos)
      << a.rationale;

  m.ncu = Measured(20, 35);  // neither unit busy: latency, a neighbour of every class
  a = TrilMatmul();
  ValidateWithProfile(a, m);
  EXPECT_EQ(a.bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(a.confidence, "medium");
}

TEST(ReferenceAnalysisTest, WithoutNcuTheAnalysisIsTheoreticalWithTheCollectorsReason) {
  profile::Metrics m;
  m.notes.push_back(
      "ncu: Nsight Compute (ncu) not found; no hardware counters (set KERNELPRO_NCU)");
  ReferenceAnalysis a = TrilMatmul();
  ValidateWithProfile(a, m);
  EXPECT_FALSE(a.measured.has_value());
  EXPECT_EQ(a.confidence, "theoretical");
  EXPECT_NE(a.notes.back().find("not found"), std::string::npos);
  EXPECT_NE(a.notes.back().find("theoretical only"), std::string::npos);
}

TEST(ReferenceAnalysisTest, PositionOfATimedKernel) {
  ReferenceAnalysis a = TrilMatmul();
  RooflinePosition p = PositionAgainstRoofline(a, a.roofline.attainable_time_s / 0.71);
  EXPECT_NEAR(p.fraction_of_bound, 0.71, 1e-12);
  EXPECT_NE(p.summary.find("reaches 71 % of the attainable bound"), std::string::npos) << p.summary;
  EXPECT_NEAR(p.achieved_flops, 0.71 * 67e12, 1e3);
  EXPECT_EQ(p.summary.find("less work"), std::string::npos);
  // The example tril_matmul candidate skips the zero half of the triangles: faster than the
  // reference's dense bound, which the summary must explain rather than present as magic.
  RooflinePosition beyond = PositionAgainstRoofline(a, a.roofline.attainable_time_s / 1.63);
  EXPECT_NE(beyond.summary.find("reaches 163 % of the attainable bound"), std::string::npos)
      << beyond.summary;
  EXPECT_NE(beyond.summary.find("the kernel does less work than the reference's operations"),
            std::string::npos);
}

TEST(ReferenceAnalysisTest, JsonRoundTripsAndChecksTheSchemaVersion) {
  ReferenceAnalysis a = TrilMatmul();
  ValidateWithProfile(a, TrilMatmulProfile());
  Json j = ToJson(a);
  EXPECT_EQ(j["schema_version"], kReferenceAnalysisSchemaVersion);
  EXPECT_EQ(j["bottleneck"], "compute");
  EXPECT_EQ(j["theoretical_class"], "compute");
  EXPECT_EQ(j["measured"]["class"], "compute");
  EXPECT_EQ(j["precision_description"], "fp32 on CUDA cores");
  auto back = ReferenceAnalysisFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ToJson(*back), j);
  j["schema_version"] = 99;
  EXPECT_FALSE(ReferenceAnalysisFromJson(j).ok());
}

TEST(ReferenceAnalysisTest, WorkerFailureIsAnError) {
  auto a = AnalyzeReference(Json{{"status", "problem_error"}, {"message", "boom"}}, "p.py", H200());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("boom"), std::string::npos);
}

// ---- Triton and CUDA programs (docs/stage1-programs.md) -----------------------------------------

// The worker's analyze result for a program without a REFERENCE: no FLOPs (torch's counter
// cannot see the kernels), bytes from the launcher's tensors.
Json ProgramWithoutReference(double in_bytes, double out_bytes) {
  return Json{{"status", "ok"},
              {"device", "cuda"},
              {"device_name", "NVIDIA H200"},
              {"operations", Json::array()},
              {"dominant_category", nullptr},
              {"dominant_dtype", "float32"},
              {"flops", nullptr},
              {"flops_estimated", nullptr},
              {"flops_source",
               "none: the program's kernels are opaque to torch's operator counter; ncu measures "
               "them"},
              {"input_bytes", in_bytes},
              {"parameter_bytes", 0},
              {"output_bytes", out_bytes},
              {"min_bytes", in_bytes + out_bytes},
              {"flops_notes", Json::array()},
              {"program", {{"kind", "cuda"}, {"entry", "naive_matmul"}, {"reference", nullptr}}},
              {"bytes_source",
               "the launcher's tensors: inputs and init tensors read once, outputs written once "
               "(output shapes from one run of the program on cuda)"}};
}

profile::Metrics FixtureProfile(const std::string& name) {
  profile::ArtifactPaths paths;
  paths.ncu_csv = kRoot + "/tests/fixtures/h200/" + name + ".ncu.csv";
  return profile::CollectFromArtifacts(paths);
}

TEST(ProgramStageOneTest, WithoutFlopsTheClassWaitsForNcu) {
  const double n = 2048.0 * 2048 * 4;
  auto a = AnalyzeReference(ProgramWithoutReference(2 * n, n), "matmul.cu", H200());
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(a->program.has_value());
  EXPECT_TRUE(a->program->flops_pending);
  EXPECT_EQ(a->confidence, "pending");
  EXPECT_EQ(a->rationale,
            "memory-bound on the minimum bytes alone: FLOPs not yet measured (the program's "
            "kernels are opaque to torch's operator counter), bytes from the launcher's tensors "
            "(50.33 MB). Waiting for the measured side: ncu over the program's own kernels gives "
            "its FLOPs and the measured class");
  Json j = ToJson(*a);
  EXPECT_TRUE(j["flops"].is_null());
  EXPECT_EQ(j["program"]["kind"], "cuda");
  auto back = ReferenceAnalysisFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->program->flops_pending);
  EXPECT_EQ(ToJson(*back), j);
  std::string text = RenderReferenceAnalysis(*a);
  EXPECT_NE(text.find("program     cuda program, entry naive_matmul; no PyTorch reference"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("flops       unknown (none: the program's kernels are opaque"),
            std::string::npos)
      << text;
}

TEST(ProgramStageOneTest, NcuCountsTheProgramsFlopsAndTheClassSaysSo) {
  // k_naive_matmul: one fp32 2048^3 matmul kernel, 8589934592 FFMA thread instructions.
  const double n = 2048.0 * 2048 * 4;
  ReferenceAnalysis a = *AnalyzeReference(ProgramWithoutReference(2 * n, n), "matmul.cu", H200());
  ValidateWithProfile(a, FixtureProfile("k_naive_matmul"));
  ASSERT_TRUE(a.program->measured_flops.has_value());
  EXPECT_FALSE(a.program->flops_pending);
  EXPECT_DOUBLE_EQ(a.flops, 2 * 8589934592.0);
  EXPECT_EQ(a.program->measured_flops->kernel_count, 1);
  EXPECT_EQ(a.flops_source,
            "ncu over the program's kernel: add + mul + 2 x fma thread instructions");
  EXPECT_NEAR(a.roofline.arithmetic_intensity, 2 * 8589934592.0 / (3 * n), 1e-9);  // 341.3
  EXPECT_EQ(a.bottleneck, Bottleneck::kCompute);
  // ncu finds the naive kernel memory-bound (no reuse): the theoretical class stays.
  ASSERT_TRUE(a.measured.has_value());
  EXPECT_EQ(a.measured->bottleneck, Bottleneck::kMemory);
  EXPECT_EQ(a.confidence, "low");
  EXPECT_TRUE(a.rationale.starts_with(
      "compute-bound at 341.33 FLOP/B: FLOPs measured by ncu over the program's kernel "
      "(17.18 GFLOP), bytes from the launcher's tensors (50.33 MB). theoretical says compute"))
      << a.rationale;
  Json j = ToJson(a);
  EXPECT_EQ(j["flops_measured"]["fp32"], 2 * 8589934592.0);
  EXPECT_EQ(ToJson(*ReferenceAnalysisFromJson(j)), j);
}

TEST(ProgramStageOneTest, TensorCoreInstructionsMakeTheCountALowerBound) {
  profile::Metrics m;
  m.ncu = Measured(93, 40);
  for (auto* v : {&m.ncu->aggregate.values, &m.ncu->kernels[0].values}) {
    (*v)["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] = 0;
    (*v)["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"] = 0;
    (*v)["smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"] = 0;
    (*v)["sm__inst_executed_pipe_tensor_op_hmma.sum"] = 2e6;
  }
  Json w = ProgramWithoutReference(2 * 2048.0 * 2048 * 2, 2048.0 * 2048 * 2);
  w["dominant_dtype"] = "bfloat16";
  ReferenceAnalysis a = *AnalyzeReference(w, "gemm.py", H200());
  ValidateWithProfile(a, m);
  // No countable FLOPs: the class is ncu's, on the tensor-core peak, and said to be so.
  EXPECT_TRUE(a.program->flops_pending);
  EXPECT_EQ(a.precision, "bf16_tensor");
  EXPECT_EQ(a.bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(a.confidence, "measured");
  EXPECT_NE(a.rationale.find("No theoretical class: the class is ncu's measured one (SM 93.0 %"),
            std::string::npos)
      << a.rationale;
  EXPECT_NE(a.notes.back().find("issued 2.00 M tensor-core instructions"), std::string::npos)
      << a.notes.back();
}

TEST(ProgramStageOneTest, WithAReferenceTheCountedFlopsStayAndTheDerivationIsStated) {
  const double n = 2048.0 * 2048 * 4;
  Json w = WorkerResult("gemm", "float32", 2 * 8589934592.0, 2 * n, n);
  w["program"] = {{"kind", "triton"}, {"entry", "matmul"}, {"reference", "/p/reference.py"}};
  w["flops_source"] = "FLOPs counted on the PyTorch reference (shape formulas)";
  w["bytes_source"] = "the launcher's tensors";
  ReferenceAnalysis a = *AnalyzeReference(w, "matmul.py", H200());
  EXPECT_FALSE(a.program->flops_pending);
  EXPECT_EQ(a.confidence, "theoretical");
  EXPECT_EQ(a.rationale,
            "compute-bound at 341.33 FLOP/B: FLOPs counted on the PyTorch reference (17.18 "
            "GFLOP), bytes from the launcher's tensors (50.33 MB). theoretical roofline only (no "
            "ncu measurement)");
  ValidateWithProfile(a, FixtureProfile("k_naive_matmul"));
  EXPECT_DOUBLE_EQ(a.flops, 2 * 8589934592.0);
  EXPECT_FALSE(a.program->measured_flops.has_value());
  EXPECT_NE(a.notes.back().find("ncu counted 17.18 GFLOP of CUDA-core arithmetic over the "
                                "program's kernel; the class uses the reference's count"),
            std::string::npos)
      << a.notes.back();
}

TEST(ProgramStageOneTest, UnknownBytesGiveNoTheoreticalClass) {
  Json w = ProgramWithoutReference(8e6, 0);
  w["output_bytes"] = nullptr;
  w["min_bytes"] = nullptr;
  w["bytes_source"] = "unknown: a triton program runs only on the GPU it targets";
  ReferenceAnalysis a = *AnalyzeReference(w, "add.py", H200());
  EXPECT_FALSE(a.program->bytes_known);
  EXPECT_EQ(a.confidence, "pending");
  EXPECT_TRUE(a.rationale.starts_with(
      "no theoretical class: FLOPs not yet measured (the program's kernels are opaque to "
      "torch's operator counter), bytes unknown (unknown: a triton program runs only on the GPU "
      "it targets). Waiting for the measured side"))
      << a.rationale;
  EXPECT_TRUE(ToJson(a)["min_bytes"].is_null());
}

TEST(ProgramStageOneTest, PytorchProblemsHaveNoProgramKeys) {
  Json j = ToJson(TrilMatmul());
  EXPECT_FALSE(j.contains("program"));
  EXPECT_FALSE(j.contains("bytes_source"));
  EXPECT_FALSE(j.contains("flops_measured"));
}

}  // namespace roofline_reference_analysis_test
}  // namespace kernelpro::roofline
