// The Metrics record from saved artifacts (kernelpro collect) and how kernelpro drives ncu.
#include "profile/collect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/json_io.h"
#include "profile/ncu_csv.h"
#include "profile/ncu_runner.h"
#include "profile/sass.h"
#include "profile/timeline.h"

namespace kernelpro::profile {
namespace profile_collect_test {

const std::string kFixtures = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200";

// `kernelpro profile` on the H200 (scripts/gpu_verify OUT record profile): the raw artifacts it
// saved and the record it printed, for the example candidates and the profiling targets.
const std::string kProfiled = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200-profile";

Metrics Profiled(const std::string& dir, const std::string& name) {
  return CollectFromArtifacts(ArtifactsIn(kProfiled + "/" + dir, name));
}

const NcuKernel* FindKernel(const NcuView& view, const std::string& name) {
  for (const NcuKernel& k : view.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const SassKernel* FindSass(const SassView& view, const std::string& name) {
  for (const SassKernel& k : view.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

TEST(H200ProfileTest, CollectFromTheSavedArtifactsGivesTheRecordProfilePrinted) {
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"profiles", "linear_gelu"},    {"profiles", "rms_norm"},
      {"profiles", "scaled_softmax"}, {"profiles", "swish"},
      {"profiles", "tiny_mlp"},       {"profiles", "tril_matmul"},
      {"record", "wgmma_tile"},       {"record", "cp_async_copy"},
      {"record", "cublas_tril"},      {"record", "tril_matmul_reference"}};
  for (const auto& [dir, name] : runs) {
    auto printed = ReadJsonFile(kProfiled + "/" + dir + "/" + name + ".metrics.json");
    ASSERT_TRUE(printed.ok()) << printed.status().ToString();
    Json collected = ToJson(Profiled(dir, name));
    EXPECT_EQ(collected, *printed) << name;
    EXPECT_FALSE(collected["ncu"].is_null()) << name;
    EXPECT_FALSE(collected["timeline"].is_null()) << name;
  }
}

TEST(H200ProfileTest, SwishProfilesOnlyTheEntryKernelThatRan) {
  Metrics m = Profiled("profiles", "swish");
  ASSERT_TRUE(m.ncu && m.sass && m.timeline);
  // The .so holds a scalar and a float4 kernel; the forward launched the float4 one.
  EXPECT_EQ(m.sass->arch, "sm_90a");
  EXPECT_EQ(m.sass->entry_points.size(), 2u);
  ASSERT_EQ(m.ncu->kernels.size(), 1u);
  const NcuKernel& k = m.ncu->kernels[0];
  EXPECT_EQ(k.name, "_Z17swish_vec4_kernelPKfPfl");
  EXPECT_DOUBLE_EQ(k.duration_ns(), 32768);
  EXPECT_DOUBLE_EQ(k.values.at("dram__bytes_read.sum"), 67116800);  // 16 Mi floats read once
  EXPECT_DOUBLE_EQ(
      k.values.at("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"), 16);
  const SassKernel* vec4 = FindSass(*m.sass, "_Z17swish_vec4_kernelPKfPfl");
  ASSERT_NE(vec4, nullptr);
  EXPECT_EQ(vec4->categories.at("global_load_128"), 1);
  EXPECT_EQ(vec4->categories.at("global_store_128"), 1);
  EXPECT_EQ(vec4->registers, 31);
  EXPECT_EQ(m.timeline->kernel_count, 1);
  EXPECT_EQ(m.timeline->sync_calls, 1);  // the worker's own, not the profiler's
}

TEST(H200ProfileTest, WarpgroupMmaShowsInSassAndInTheTensorPipeCounters) {
  Metrics m = Profiled("record", "wgmma_tile");
  ASSERT_TRUE(m.ncu && m.sass);
  const SassKernel* k = FindSass(*m.sass, "_Z15wgmma_m64n64k16PK6__halfS1_Pf");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->categories.at("tensor_wgmma"), 1);
  EXPECT_EQ(k->categories.at("tensor_hmma"), 0);
  EXPECT_EQ(k->shared_bytes, 5120);
  EXPECT_EQ(k->registers, 58);
  ASSERT_EQ(m.ncu->kernels.size(), 1u);
  // One warpgroup MMA is one tensor-pipe instruction per warp of the warpgroup.
  EXPECT_DOUBLE_EQ(m.ncu->kernels[0].values.at("sm__inst_executed_pipe_tensor_op_hmma.sum"), 4);
}

TEST(H200ProfileTest, CpAsyncShowsAsLdgstsInSassAndCounters) {
  Metrics m = Profiled("record", "cp_async_copy");
  ASSERT_TRUE(m.ncu && m.sass);
  const SassKernel* k = FindSass(*m.sass, "_Z13cp_async_tilePK6float4PS_i");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->categories.at("ldgsts"), 1);
  EXPECT_EQ(k->shared_bytes, 5120);
  ASSERT_EQ(m.ncu->kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(m.ncu->kernels[0].values.at("sm__sass_inst_executed_op_ldgsts.sum"), 131072);
}

TEST(H200ProfileTest, ACandidateCallingCublasKeepsTheGemmAndItsOwnKernel) {
  Metrics m = Profiled("record", "cublas_tril");
  ASSERT_TRUE(m.ncu && m.sass);
  EXPECT_EQ(m.sass->library_calls,
            (std::vector<std::string>{"cublasSetStream_v2", "cublasSgemm_v2"}));
  EXPECT_EQ(m.sass->entry_points, std::vector<std::string>{"_Z10zero_upperPfi"});
  ASSERT_EQ(m.ncu->kernels.size(), 2u);
  EXPECT_EQ(m.ncu->kernels[0].name.rfind("_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm", 0), 0u);
  EXPECT_NE(FindKernel(*m.ncu, "_Z10zero_upperPfi"), nullptr);
  EXPECT_DOUBLE_EQ(m.ncu->aggregate.duration_ns(), 346944);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("it calls a library"), std::string::npos);
}

TEST(H200ProfileTest, TheReferenceHasNoSassAndKeepsEveryKernelOfItsForward) {
  Metrics m = Profiled("record", "tril_matmul_reference");
  EXPECT_FALSE(m.sass.has_value());
  ASSERT_TRUE(m.ncu && m.timeline);
  ASSERT_EQ(m.ncu->kernels.size(),
            2u);  // cuBLAS's GEMM and ATen's tril, nothing of input generation
  EXPECT_EQ(KernelBaseName(m.ncu->kernels[1].name), "triu_tril_kernel");
  EXPECT_EQ(m.timeline->kernel_count, 2);
}

TEST(H200ProfileTest, TrilMatmulKeyNumbers) {
  Metrics m = Profiled("profiles", "tril_matmul");
  ASSERT_TRUE(m.ncu && m.sass && m.timeline);
  ASSERT_EQ(m.ncu->kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(m.ncu->kernels[0].duration_ns(), 185632);
  EXPECT_DOUBLE_EQ(m.ncu->kernels[0].values.at("launch__registers_per_thread"), 125);
  EXPECT_EQ(m.sass->kernels.at(0).registers, 125);  // cuobjdump -res-usage agrees with ncu
  EXPECT_EQ(m.sass->kernels.at(0).total_instructions, 1773);
  EXPECT_NEAR(m.timeline->end_to_end_us, 200.1489375, 1e-6);
  EXPECT_NEAR(m.timeline->gpu_busy_us, 157.313, 1e-6);
  EXPECT_EQ(m.timeline->sync_calls, 1);
}

TEST(CollectTest, FindsTheFixtureLayoutByName) {
  ArtifactPaths p = ArtifactsIn(kFixtures, "k_swish_scalar");
  EXPECT_NE(p.ncu_csv.find("k_swish_scalar.ncu.csv"), std::string::npos);
  EXPECT_NE(p.sass.find("k_swish_scalar.sass.txt"), std::string::npos);
  EXPECT_NE(p.res_usage.find("k_swish_scalar.resusage.txt"), std::string::npos);
  EXPECT_NE(p.symbols.find("k_swish_scalar.symbols.txt"), std::string::npos);
  EXPECT_TRUE(p.nm.empty());  // only k_naive_matmul has an nm recording
  EXPECT_NE(p.trace.find("k_swish_scalar.trace.json"), std::string::npos);
}

TEST(CollectTest, AllThreeViewsFromTheSwishScalarRecording) {
  Metrics m = CollectFromArtifacts(ArtifactsIn(kFixtures, "k_swish_scalar"));
  ASSERT_TRUE(m.ncu.has_value());
  ASSERT_TRUE(m.sass.has_value());
  ASSERT_TRUE(m.timeline.has_value());
  ASSERT_EQ(m.ncu->kernels.size(), 1u);
  EXPECT_EQ(KernelBaseName(m.ncu->kernels[0].name), KernelBaseName(m.sass->entry_points.at(0)));
  EXPECT_EQ(KernelBaseName(m.ncu->kernels[0].name), "swish_scalar");
  EXPECT_GT(m.ncu->kernels[0].duration_ns(), 0);
  Json j = ToJson(m);
  EXPECT_EQ(j["schema_version"], kMetricsSchemaVersion);
  EXPECT_TRUE(j["ncu"]["kernels"][0]["values"].contains("gpu__time_duration.sum"));
  EXPECT_GT(j["sass"]["kernels"][0]["total_instructions"].get<int>(), 0);
  EXPECT_GT(j["timeline"]["kernel_count"].get<int>(), 0);
}

TEST(CollectTest, MissingViewsAreNotesNotFailures) {
  ArtifactPaths p;
  p.sass = kFixtures + "/k_wmma.sass.txt";
  p.ncu_csv = kFixtures + "/does_not_exist.csv";
  Metrics m = CollectFromArtifacts(p);
  EXPECT_TRUE(m.sass.has_value());
  EXPECT_FALSE(m.ncu.has_value());
  EXPECT_FALSE(m.timeline.has_value());
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("does_not_exist.csv"), std::string::npos);
}

TEST(CollectTest, RenderedSummaryNamesKernelsAndViews) {
  std::string text = RenderMetrics(CollectFromArtifacts(ArtifactsIn(kFixtures, "k_swish_vec")));
  EXPECT_NE(text.find("ncu: 1 kernel launch(es)"), std::string::npos) << text;
  // Names are shown demangled (the record keeps them as ncu and cuobjdump printed them).
  EXPECT_NE(text.find("swish_vec4(float4 const*, float4*, int)"), std::string::npos) << text;
  EXPECT_EQ(text.find("_Z10swish_vec4"), std::string::npos) << text;
  EXPECT_NE(text.find("sass: sm_90a"), std::string::npos) << text;
}

TEST(NcuRunnerTest, LeavesClocksAloneUnlessAskedAndFiltersByRangeAndName) {
  NcuOptions options;
  auto argv = NcuArgv("/usr/bin/ncu", options, {"_Z3addPfi", "_Z3mulPf"});
  auto has = [&](const std::string& a, const std::string& b) {
    auto it = std::find(argv.begin(), argv.end(), a);
    return it != argv.end() && it + 1 != argv.end() && *(it + 1) == b;
  };
  EXPECT_TRUE(has("--clock-control", "none"));
  EXPECT_TRUE(has("--cache-control", "all"));  // cold caches: verified_work compares DRAM reads
  EXPECT_TRUE(has("--nvtx-include", "kernelpro/"));
  EXPECT_TRUE(has("--kernel-name", "regex:^(_Z3addPfi|_Z3mulPf)$"));
  EXPECT_TRUE(has("--kernel-name-base", "mangled"));
  EXPECT_TRUE(has("--print-units", "base"));
  // Only the requested rollups: without this ncu adds .avg/.min/.max/.sum of every counter.
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--disable-extra-suffixes"), argv.end());
  options.lock_clocks = true;
  auto locked = NcuArgv("/usr/bin/ncu", options, {});
  EXPECT_NE(std::find(locked.begin(), locked.end(), "base"), locked.end());
  EXPECT_EQ(std::find(locked.begin(), locked.end(), "--kernel-name"), locked.end());
}

TEST(NcuRunnerTest, BaseNamesMatchMangledAndDemangledForms) {
  EXPECT_EQ(KernelBaseName("_Z10swish_vec4PK6float4PS_i"), "swish_vec4");
  EXPECT_EQ(KernelBaseName("swish_vec4(const float4 *, float4 *, int)"), "swish_vec4");
  EXPECT_EQ(KernelBaseName("void at::native::vectorized_elementwise_kernel<4, F>(int, F)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(KernelBaseName("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"),
            "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
}

TEST(NcuRunnerTest, TrimKeepsProfilerLinesAndCsvButNotTheProgramsOutput) {
  std::string out =
      "hello from the candidate\n==PROF== Connected to process 1\n\"ID\",\"Kernel "
      "Name\"\n\"\",\"\"\nprinted later\n";
  EXPECT_EQ(TrimNcuOutput(out),
            "==PROF== Connected to process 1\n\"ID\",\"Kernel Name\"\n\"\",\"\"\nprinted later\n");
}

TEST(NcuRunnerTest, LibraryKernelsFallBackToTheLongestOnes) {
  std::ifstream in(kFixtures + "/p_cublas_bf16.ncu.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto view = ParseNcuCsv(text);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  std::size_t profiled = view->kernels.size();
  std::vector<std::string> notes;
  SelectCandidateKernels(*view, {"_Z9my_kernelPf"}, false, notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("longest"), std::string::npos) << notes[0];
  EXPECT_GE(view->kernels.size(), 1u);
  EXPECT_LE(view->kernels.size(), profiled);
  // The kept kernels are the longest: none dropped ran longer than the shortest kept.
  double shortest_kept = 1e300;
  for (const NcuKernel& k : view->kernels) shortest_kept = std::min(shortest_kept, k.duration_ns());
  auto all = ParseNcuCsv(text);
  for (const NcuKernel& k : all->kernels) {
    bool kept = std::any_of(view->kernels.begin(), view->kernels.end(),
                            [&](const NcuKernel& x) { return x.id == k.id; });
    if (!kept) EXPECT_LE(k.duration_ns(), shortest_kept) << k.name;
  }
}

TEST(NcuRunnerTest, ACandidateCallingALibraryKeepsItsOwnKernelsAndTheLongestOthers) {
  // cuBLAS GEMM then the candidate's own masking kernel, plus a tiny fill ATen launched.
  auto kernel = [](int id, std::string name, double ns) {
    NcuKernel k;
    k.id = id;
    k.name = std::move(name);
    k.values["gpu__time_duration.sum"] = ns;
    return k;
  };
  NcuView launches;
  launches.kernels = {kernel(0, "fill_kernel", 1'000), kernel(1, "sm90_xmma_gemm_f32f32", 900'000),
                      kernel(2, "_Z10zero_upperPfi", 20'000)};
  NcuView view = launches;
  std::vector<std::string> notes;
  SelectCandidateKernels(view, {"_Z10zero_upperPfi"}, /*calls_libraries=*/true, notes);
  ASSERT_EQ(view.kernels.size(), 2u);
  EXPECT_EQ(view.kernels[0].name, "sm90_xmma_gemm_f32f32");  // launch order kept
  EXPECT_EQ(view.kernels[1].name, "_Z10zero_upperPfi");
  EXPECT_DOUBLE_EQ(view.aggregate.duration_ns(), 920'000);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("1 own kernel launch(es) and the 1 longest other(s) of 3"),
            std::string::npos)
      << notes[0];
  // Without a library call the same entry keeps only the candidate's own launch.
  view = launches;
  notes.clear();
  SelectCandidateKernels(view, {"_Z10zero_upperPfi"}, false, notes);
  ASSERT_EQ(view.kernels.size(), 1u);
  EXPECT_EQ(view.kernels[0].name, "_Z10zero_upperPfi");
}

}  // namespace profile_collect_test
}  // namespace kernelpro::profile

namespace kernelpro::profile {
namespace profile_collect_test {

// Inputs libFuzzer found interesting (fuzz/run; ASan/UBSan clean when kept): every parser gets
// every one of them, whatever parser it was found for, and must return without crashing.
TEST(FuzzCorpusTest, EveryParserSurvivesTheKeptCorpus) {
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(KERNELPRO_SOURCE_DIR) + "/fuzz/corpus")) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SassView view;
    (void)ParseNcuCsv(text);
    (void)ParseSassDump(text);
    ApplyResourceUsage(text, view);
    (void)ParseEntryPoints(text);
    (void)ParseLibraryCalls(text);
    (void)ParseTorchProfilerTrace(text);
    ++files;
  }
  EXPECT_GT(files, 100u);
}

}  // namespace profile_collect_test
}  // namespace kernelpro::profile
