// Golden files for the rendered "Automated Bottleneck Analysis" of every H200 recording: what the
// built-in tools say about real kernels, reviewed as text. Regenerate after an intended change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='GuidanceGolden*'
// and read the diff before committing it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "profile/collect.h"
#include "tools/registry.h"
#include "tools/render.h"

namespace kernelpro::tools {
namespace tools_guidance_golden_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

struct Recording {
  std::string dir, name;
  roofline::Bottleneck
      bottleneck;  // the class Stage 1 gives the problem (see tests/fixtures/*/README.md)
};

const Recording kRecordings[] = {
    {"tests/fixtures/h200", "k_naive_matmul", roofline::Bottleneck::kCompute},
    {"tests/fixtures/h200", "k_strided_copy", roofline::Bottleneck::kMemory},
    {"tests/fixtures/h200", "k_swish_scalar", roofline::Bottleneck::kMemory},
    {"tests/fixtures/h200", "k_swish_vec", roofline::Bottleneck::kMemory},
    {"tests/fixtures/h200", "k_wmma", roofline::Bottleneck::kCompute},
    {"tests/fixtures/h200", "p_cublas_bf16", roofline::Bottleneck::kCompute},
    {"tests/fixtures/h200", "p_many_launches", roofline::Bottleneck::kLatency},
    {"tests/fixtures/h200-profile/profiles", "swish", roofline::Bottleneck::kMemory},
    {"tests/fixtures/h200-profile/profiles", "rms_norm", roofline::Bottleneck::kMemory},
    {"tests/fixtures/h200-profile/profiles", "scaled_softmax", roofline::Bottleneck::kMemory},
    {"tests/fixtures/h200-profile/profiles", "linear_gelu", roofline::Bottleneck::kMixed},
    {"tests/fixtures/h200-profile/profiles", "tiny_mlp", roofline::Bottleneck::kLatency},
    {"tests/fixtures/h200-profile/profiles", "tril_matmul", roofline::Bottleneck::kCompute},
    {"tests/fixtures/h200-profile/record", "wgmma_tile", roofline::Bottleneck::kLatency},
    {"tests/fixtures/h200-profile/record", "cp_async_copy", roofline::Bottleneck::kMemory},
    {"tests/fixtures/h200-profile/record", "cublas_tril", roofline::Bottleneck::kCompute},
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(GuidanceGoldenTest, EveryRecordingRendersAsReviewed) {
  const bool update = std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr;
  ToolRegistry registry = BuiltinRegistry();
  for (const Recording& r : kRecordings) {
    profile::Metrics metrics =
        profile::CollectFromArtifacts(profile::ArtifactsIn(kRoot + "/" + r.dir, r.name));
    AnalysisOptions options;
    options.bottleneck = r.bottleneck;
    std::string text = RenderGuidance(registry.Analyze(metrics, options));
    // Identical metrics, identical bytes.
    EXPECT_EQ(text, RenderGuidance(registry.Analyze(metrics, options))) << r.name;
    std::string golden = kRoot + "/tests/golden/guidance/" + r.name + ".md";
    if (update) {
      std::ofstream(golden) << text;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(golden))
        << golden << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
    EXPECT_EQ(text, ReadFile(golden))
        << "rendered guidance for " << r.name << " changed; review, then regenerate";
  }
}

}  // namespace tools_guidance_golden_test
}  // namespace kernelpro::tools
