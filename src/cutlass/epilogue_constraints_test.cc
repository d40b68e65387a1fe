// The vectorised-epilogue constraints: mined from the real CUTLASS 4.2 tree's SM90 epilogues, and
// the curated checks on planted candidates.
#include "cutlass/epilogue_constraints.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cutlass/cutlass_testing.h"

namespace kernelpro::cutlass {
namespace cutlass_epilogue_constraints_test {

std::vector<std::string> Ids(const std::vector<ConstraintViolation>& violations) {
  std::vector<std::string> ids;
  for (const auto& v : violations) ids.push_back(v.constraint_id);
  return ids;
}

// A CUTLASS GEMM candidate's CUDA source whose SM90 epilogue stores half_t D with `alignment`.
std::string Sm90Epilogue(int alignment) {
  return "_CU = r\"\"\"\n"
         "#include <cutlass/epilogue/collective/collective_builder.hpp>\n"
         "using ElementC = cutlass::half_t;\n"
         "using ElementD = cutlass::half_t;\n"
         "constexpr int AlignmentC = 8;\n"
         "constexpr int AlignmentD = " +
         std::to_string(alignment) +
         ";\n"
         "using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<\n"
         "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,\n"
         "    cutlass::epilogue::collective::EpilogueTileAuto, float, float, ElementC, LayoutC,\n"
         "    AlignmentC, ElementD, LayoutD, AlignmentD,\n"
         "    cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;\n"
         "\"\"\"\n";
}

TEST(EpilogueConstraintsTest, TheCuratedOnesAreInTheListThePromptCarries) {
  std::vector<std::string> ids;
  for (const Constraint& c : CuratedConstraints()) ids.push_back(c.id);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "epilogue.tma_alignment"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "epilogue.vector_access"), ids.end());
  EXPECT_NE(RenderConstraintsMarkdown(CuratedConstraints(), 1 << 20)
                .find("AlignmentC and AlignmentD (in elements) times the element's bits"),
            std::string::npos);
}

TEST(EpilogueConstraintsTest, AnSm90EpilogueWhoseAlignmentIsNotSixteenBytesIsCaughtBeforeABuild) {
  // 4 half_t elements are 64 bits: the TMA epilogue's static_assert would fail a long build.
  // (Only the epilogue rules here: the build-flag rules have their own tests.)
  const auto bad = ValidateCandidate(Sm90Epilogue(4), EpilogueConstraints());
  ASSERT_EQ(Ids(bad), std::vector<std::string>{"epilogue.tma_alignment"});
  EXPECT_EQ(bad[0].line, 6);
  EXPECT_EQ(bad[0].message.rfind("make AlignmentD 8 (or a multiple): 4 elements of 16 bits are "
                                 "64 bits",
                                 0),
            0u)
      << bad[0].message;
  EXPECT_TRUE(ValidateCandidate(Sm90Epilogue(8), EpilogueConstraints()).empty());
  EXPECT_TRUE(ValidateCandidate(Sm90Epilogue(16), EpilogueConstraints()).empty());
  // Only checked where it was asked for.
  EXPECT_TRUE(ValidateCandidate(Sm90Epilogue(4), {}).empty());
}

TEST(EpilogueConstraintsTest, AVectorAccessOffsetByLessThanItsWidthIsCaught) {
  const std::string source =
      "_CU = r\"\"\"\n"
      "__global__ void k(const float* x, float* y, int n) {\n"
      "  float4 a = reinterpret_cast<const float4*>(x + 2)[threadIdx.x];\n"
      "  float4 b = reinterpret_cast<const float4*>(x + 4)[threadIdx.x];\n"
      "  reinterpret_cast<float2*>(&y[3])[0] = make_float2(a.x, b.y);\n"
      "  // reinterpret_cast<float4*>(y + 1) in a comment is not code\n"
      "}\n"
      "\"\"\"\n";
  const auto found = ValidateCandidate(source, EpilogueConstraints());
  ASSERT_EQ(Ids(found),
            (std::vector<std::string>{"epilogue.vector_access", "epilogue.vector_access"}));
  EXPECT_EQ(found[0].line, 3);
  EXPECT_EQ(found[0].message.rfind("offset this float4 access by a multiple of 4 elements (it "
                                   "is offset by 2)",
                                   0),
            0u)
      << found[0].message;
  EXPECT_EQ(found[1].line, 5);
}

TEST(EpilogueConstraintsTest, TheSm90EpiloguesAssertsAreMinedFromTheRealTree) {
  const std::string include_dir = testing::TestIncludeDir();
  if (include_dir.empty()) {
    GTEST_SKIP() << "needs a CUTLASS tree (run scripts/setup, or set KERNELPRO_CUTLASS_DIR)";
  }
  auto mined = MineConstraints(include_dir);
  ASSERT_TRUE(mined.ok()) << mined.status().message();
  auto find = [&](const std::string& message) { return testing::FindConstraint(*mined, message); };
  const Constraint* alignment = find("C/D Should meet TMA alignment requirement");
  ASSERT_NE(alignment, nullptr);
  EXPECT_EQ(alignment->category, "epilogue");
  EXPECT_EQ(alignment->source.rfind("cutlass/epilogue/collective/builders/sm90_builder.inl:", 0),
            0u)
      << alignment->source;
  const Constraint* tile = find("EPI_TILE_M must divide CTA_M");
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->category, "epilogue");
  EXPECT_NE(find("This TMA epilogue configuration will deadlock"), nullptr);
}

}  // namespace cutlass_epilogue_constraints_test
}  // namespace kernelpro::cutlass
