#include "cutlass/smem_probe.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/tool_paths.h"
#include "cutlass/cutlass_testing.h"

namespace kernelpro::cutlass {
namespace cutlass_smem_probe_test {

namespace fs = std::filesystem;

// The CUTLASS include folder the tests compile against: $KERNELPRO_CUTLASS_DIR (a checkout or the
// include folder itself) or the copy scripts/setup installs under .tools/.
using testing::TestIncludeDir;

class SmemProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() /
             ("kp_smem_probe_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cache_);
  }
  void TearDown() override { fs::remove_all(cache_); }

  // Skips (with the reason) where nothing can be compiled: no nvcc or no CUTLASS tree.
  bool CanCompile() {
    options_.include_dir = TestIncludeDir();
    options_.cache_dir = cache_.string();
    if (FindTool("nvcc").empty()) return false;
    return !options_.include_dir.empty();
  }

  fs::path cache_;
  SmemProbeOptions options_;
};

#define SKIP_WITHOUT_NVCC_AND_CUTLASS()                                         \
  if (!CanCompile()) {                                                          \
    GTEST_SKIP() << "needs nvcc and a CUTLASS tree (run scripts/setup, or set " \
                    "KERNELPRO_CUTLASS_DIR)";                                   \
  }

TEST(ProbeExpressionTest, AcceptsTheLayoutsModelsWrite) {
  EXPECT_TRUE(CheckProbeExpression("GMMA::Layout_K_SW128_Atom<cute::half_t>{}", "atom").ok());
  EXPECT_TRUE(CheckProbeExpression(
                  "composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})", "atom")
                  .ok());
  EXPECT_TRUE(CheckProbeExpression("Shape<_128,_64,_4>", "tile").ok());
  EXPECT_TRUE(CheckProbeExpression("make_shape(Int<128>{}, _64{})", "tile").ok());
}

TEST(ProbeExpressionTest, RefusesAnythingThatCouldLeaveTheDeclaration) {
  const std::vector<std::string> attacks = {
      "Shape<_128,_64>{}; int main() { return system(0); }",
      "Shape<_128,_64>\n#include </etc/passwd>",
      "decltype(puts(\"hi\"))",
      "Layout<_1>{ } } ; void f() {",
      "Shape<_1>) ; struct X { int y",
      "Shape<_1>{}/*",
      "__builtin_trap()",
      "asm(x)",
      "Shape<_1>{x}",
      "a ? b : c",
      "",
  };
  for (const std::string& attack : attacks) {
    Status s = CheckProbeExpression(attack, "the atom");
    EXPECT_FALSE(s.ok()) << attack;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << attack;
  }
  Status s = CheckProbeExpression("Shape<_128,_64>{}; int x", "the tile shape");
  EXPECT_EQ(s.message(),
            "the tile shape contains ';' (no statements); only identifiers, digits, '::', '<>', "
            "'()', empty '{}', commas and spaces are allowed");
}

TEST(ProbeExpressionTest, ExpressionsAreOnlyEverUnevaluatedInTheProbe) {
  SmemLayoutQuery q;
  q.atom = "GMMA::Layout_K_SW128_Atom<Element>{}";
  q.tile_shape = "Shape<_128,_64>";
  const std::string source = SmemProbeSource(q);
  EXPECT_NE(source.find("using KpAtom = decltype(GMMA::Layout_K_SW128_Atom<Element>{});\n"),
            std::string::npos);
  EXPECT_NE(source.find("using KpTile = Shape<_128,_64>;\n"), std::string::npos);
  EXPECT_NE(source.find("using Element = cute::half_t;\n"), std::string::npos);
}

TEST(ProbeDiagnosisTest, NamesTheFieldAndSuggestsIntForUnnamedConstants) {
  const std::string output =
      "kp_smem_probe.cu(10): error: identifier \"_100\" is undefined\n"
      "  using KpTile = Shape<_100,_64>;\n"
      "                       ^\n\n"
      "1 error detected in the compilation of \"kp_smem_probe.cu\".\n";
  EXPECT_EQ(DiagnoseProbeErrors(output, "kp_smem_probe.cu", "/inc"),
            "does not compile: identifier \"_100\" is undefined; CuTe names only some constants "
            "(_0.._10, multiples of 8 up to _256, powers of two): write Int<100> instead (in the "
            "tile shape)");
}

TEST(ProbeDiagnosisTest, HeaderStaticAssertIsShortenedToItsMessageAndPlace) {
  const std::string output =
      "/inc/cute/atom/mma_traits_sm90_gmma.hpp(141): error: static assertion failed with "
      "\"Unsupported layout swizzle\"\n"
      "    static_assert(M == 4, \"Unsupported layout swizzle\");\n"
      "    ^\n"
      "          detected during:\n"
      "            instantiation of \"auto cute::make_gmma_desc(...)\" at line 9 of "
      "/tmp/x/kp_smem_probe.cu\n";
  EXPECT_EQ(DiagnoseProbeErrors(output, "kp_smem_probe.cu", "/inc"),
            "does not compile: CUTLASS's static_assert at cute/atom/mma_traits_sm90_gmma.hpp:141 "
            "failed: Unsupported layout swizzle (in the atom expression)");
}

TEST_F(SmemProbeTest, GoodLayoutCompilesAndIsDescribed) {
  SKIP_WITHOUT_NVCC_AND_CUTLASS();
  SmemLayoutQuery q;
  q.element_type = "cute::half_t";
  q.atom = "GMMA::Layout_K_SW128_Atom<Element>{}";
  q.tile_shape = "Shape<_128,_64,_4>";
  auto d = CheckSmemLayout(q, options_);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->compiles) << d->summary;
  EXPECT_EQ(d->size, 128 * 64 * 4);
  EXPECT_EQ(d->smem_bytes, 128 * 64 * 4 * 2);
  EXPECT_EQ(d->summary,
            "compiles: layout " + d->layout + " over 32768 elements (64 KiB of cute::half_t)");
  EXPECT_NE(d->layout.find("Sw<3,4,3>"), std::string::npos) << d->layout;
  EXPECT_FALSE(d->from_cache);

  // The same question again is answered from the cache, identically.
  auto again = CheckSmemLayout(q, options_);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->summary, d->summary);
}

TEST_F(SmemProbeTest, TileNotAMultipleOfTheAtomIsNamedByMode) {
  SKIP_WITHOUT_NVCC_AND_CUTLASS();
  SmemLayoutQuery q;
  q.atom = "composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})";
  q.tile_shape = "Shape<Int<100>,_64>";
  auto d = CheckSmemLayout(q, options_);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_FALSE(d->compiles);
  EXPECT_EQ(d->summary,
            "does not compile: the tile shape (100,64) is not a multiple of the atom's (8,64) in "
            "mode 0; make each tile extent a multiple of the atom's");
  EXPECT_FALSE(d->first_error.empty());
}

TEST_F(SmemProbeTest, RefusedExpressionNeverReachesTheCompiler) {
  SmemLayoutQuery q;
  q.atom = "Layout<_1>{}; int main(){}";
  q.tile_shape = "Shape<_8>";
  options_.include_dir = "/nonexistent";
  options_.nvcc = "/nonexistent/nvcc";
  auto d = CheckSmemLayout(q, options_);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Status::Code::kInvalidArgument);
}

}  // namespace cutlass_smem_probe_test
}  // namespace kernelpro::cutlass
