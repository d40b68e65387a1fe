#include "cutlass/constraints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/text.h"
#include "cutlass/cutlass_testing.h"

namespace kernelpro::cutlass {
namespace cutlass_constraints_test {

namespace fs = std::filesystem;

using testing::TestIncludeDir;

std::vector<std::string> Ids(const std::vector<ConstraintViolation>& violations) {
  std::vector<std::string> ids;
  for (const auto& v : violations) ids.push_back(v.constraint_id);
  return ids;
}

// A warp-specialised GMMA + TMA kernel written the way the constraints ask.
const char kGoodCandidate[] = R"py(import torch
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
using namespace cute;
using TileShape = Shape<_128, _128, _64>;  // CTA tile (M, N, K)
using SmemLayoutAtom = GMMA::Layout_K_SW128_Atom<cute::half_t>;

struct SharedStorage {
  alignas(1024) cute::half_t a[128 * 64 * 4];  // GMMA::Layout_K_SW128_Atom, 4 stages
  alignas(1024) cute::half_t b[128 * 64 * 4];
  uint64_t full[4];
};

__global__ void __launch_bounds__(384, 1) gemm(const __grid_constant__ CUtensorMap tma_a) {
  extern __shared__ char smem[];
  auto& s = *reinterpret_cast<SharedStorage*>(smem);
  using Bar = cutlass::arch::ClusterTransactionBarrier;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 4; ++i) Bar::init(&s.full[i], 1);
  }
  cutlass::arch::fence_barrier_init();
  __syncthreads();
  if (threadIdx.x / 128 == 0) {
    cutlass::arch::warpgroup_reg_dealloc<40>();
    Bar::arrive_and_expect_tx(&s.full[0], 32768);
  } else {
    cutlass::arch::warpgroup_reg_alloc<232>();
    warpgroup_arrive();
  }
}
"""

_ext = load_inline(
    name="gemm",
    cpp_sources="",
    cuda_sources=SOURCE,
    extra_cuda_cflags=["-O3", "-std=c++17", "--expt-relaxed-constexpr",
                       "-gencode=arch=compute_90a,code=sm_90a"],
)
)py";

// The same kernel with one mistake per curated constraint the validator knows.
const char kBadCandidate[] = R"py(import torch
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
using namespace cute;
using TileShape = Shape<_96, _128, _24>;  // CTA tile (M, N, K)
using SmemLayoutAtom = GMMA::Layout_K_SW128_Atom<cute::half_t>;

__global__ void __launch_bounds__(320) gemm(CUtensorMap tma_a) {
  __shared__ cute::half_t a[128 * 64 * 4];  // GMMA::Layout_K_SW128_Atom
  __shared__ uint64_t full[4];
  using Bar = cutlass::arch::ClusterTransactionBarrier;
  if (threadIdx.x == 0) Bar::init(&full[0], 1);
  if (threadIdx.x / 128 == 0) {
    cutlass::arch::warpgroup_reg_dealloc<40>();
    Bar::arrive_and_expect_tx(&full[0], 32768);
  }
  warpgroup_arrive();
}
"""

_ext = load_inline(
    name="gemm",
    cpp_sources="",
    cuda_sources=SOURCE,
    extra_cuda_cflags=["-O3", "-arch=sm_90"],
)
)py";

TEST(ValidateCandidateTest, GoodCandidateHasNoViolations) {
  const auto violations = ValidateCandidate(kGoodCandidate, CuratedConstraints());
  EXPECT_TRUE(violations.empty()) << RenderViolations(violations);
}

TEST(ValidateCandidateTest, BadCandidateGetsOneFixPerMistake) {
  const auto violations = ValidateCandidate(kBadCandidate, CuratedConstraints());
  EXPECT_EQ(RenderViolations(violations),
            "line 8 [gmma.tile_divisibility] make the CTA tile (96,128,24) a multiple of the GMMA "
            "atom (64xNx16): M=96 is not a multiple of 64, K=24 is not a multiple of 16\n"
            "line 11 [tma.mbarrier] pass TMA descriptors to the kernel as `const __grid_constant__ "
            "CUtensorMap` (by value); a descriptor in ordinary parameter or global memory is not "
            "usable by TMA\n"
            "line 11 [warp_specialization.roles] __launch_bounds__(320) is not a whole number of "
            "warpgroups: warpgroup MMA and register reallocation work per 128 threads, so use "
            "128, 256 or 384\n"
            "line 12 [smem.swizzle_alignment] declare this shared-memory buffer alignas(1024): "
            "swizzled GMMA/TMA layouts address it by its low bits\n"
            "line 13 [smem.swizzle_alignment] declare this shared-memory buffer alignas(1024): "
            "swizzled GMMA/TMA layouts address it by its low bits\n"
            "line 15 [barrier.fence_after_init] after initialising the mbarriers call "
            "cutlass::arch::fence_barrier_init() so the initialisation is visible to the async "
            "proxy (TMA) and other CTAs\n"
            "line 15 [barrier.fence_after_init] after initialising the mbarriers synchronise the "
            "block (cute::cluster_sync() with clusters, __syncthreads() without) before any "
            "thread uses them\n"
            "line 17 [warp_specialization.roles] register reallocation comes in pairs: the "
            "producer warpgroup lowers its registers (warpgroup_reg_dealloc<40>) and the "
            "consumers raise theirs (warpgroup_reg_alloc<232>); only one side is here\n"
            "line 28 [build.sm90a] this kernel uses warpgroup MMA (wgmma/GMMA), which exists "
            "only on sm_90a: build with -gencode=arch=compute_90a,code=sm_90a (or -arch=sm_90a) "
            "instead of sm_90\n"
            "line 28 [build.cute_flags] CuTe/CUTLASS headers need \"--expt-relaxed-constexpr\" "
            "and \"-std=c++17\" in extra_cuda_cflags of load_inline\n");
}

// The project's own CUTLASS 3 GEMM (verified on the H200) breaks nothing; the same kernel built for
// plain sm_90 is caught although its source never names GMMA (the SM90 collective builders do).
TEST(ValidateCandidateTest, TheCollectiveBuilderGemmIsCheckedForSm90a) {
  auto read = [](const std::string& relative) {
    std::ifstream in(std::string(KERNELPRO_SOURCE_DIR) + "/" + relative);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string good = read("problems/gemm_bf16/candidates/cuda_gemm_cutlass.py");
  ASSERT_FALSE(good.empty());
  EXPECT_TRUE(ValidateCandidate(good, CuratedConstraints()).empty())
      << RenderViolations(ValidateCandidate(good, CuratedConstraints()));
  const std::string sm90 = read("problems/gemm_bf16/demo/cuda/cutlass_sm90_flags.py");
  ASSERT_FALSE(sm90.empty());
  ValidatorOptions build_adds;
  build_adds.build_adds_cutlass_flags = true;
  const auto found = ValidateCandidate(sm90, CuratedConstraints(), build_adds);
  EXPECT_EQ(Ids(found), std::vector<std::string>{"build.sm90a"});
  // The line of the flag, not of the module docstring that talks about sm_90.
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(SplitLines(sm90).at(found[0].line - 1).find("compute_90,code=sm_90"), std::string::npos)
      << found[0].line;
  const std::string flags_from_build = read("problems/gemm_bf16/demo/cuda/cutlass_build_flags.py");
  EXPECT_TRUE(ValidateCandidate(flags_from_build, CuratedConstraints(), build_adds).empty());
}

TEST(ValidateCandidateTest, OnlyTheConstraintsGivenAreChecked) {
  std::vector<Constraint> only_arch;
  for (const Constraint& c : CuratedConstraints()) {
    if (c.id == "build.sm90a") only_arch.push_back(c);
  }
  EXPECT_EQ(Ids(ValidateCandidate(kBadCandidate, only_arch)),
            std::vector<std::string>{"build.sm90a"});
  EXPECT_TRUE(ValidateCandidate(kBadCandidate, {}).empty());
}

TEST(ValidateCandidateTest, FlagsTheBuildAddsAreNotDemanded) {
  const std::string source =
      "SOURCE = r\"\"\"\n#include <cute/tensor.hpp>\n__global__ void k() { warpgroup_arrive(); }\n"
      "\"\"\"\n_ext = load_inline(name='k', cuda_sources=SOURCE)\n";
  EXPECT_EQ(Ids(ValidateCandidate(source, CuratedConstraints())),
            (std::vector<std::string>{"build.cute_flags", "build.sm90a"}));
  ValidatorOptions options;
  options.build_adds_cutlass_flags = true;
  EXPECT_TRUE(ValidateCandidate(source, CuratedConstraints(), options).empty());
}

TEST(ValidateCandidateTest, CommentedOutCodeDoesNotCount) {
  const std::string source =
      "#include <cute/tensor.hpp>\n"
      "// extra_cuda_cflags=[\"-arch=sm_90\"]  old flags\n"
      "/* __global__ void __launch_bounds__(100) k() { warpgroup_arrive(); } */\n"
      "extra_cuda_cflags=[\"-std=c++17\", \"--expt-relaxed-constexpr\", \"-arch=sm_90a\"]\n";
  const auto violations = ValidateCandidate(source, CuratedConstraints());
  EXPECT_TRUE(violations.empty()) << RenderViolations(violations);
}

TEST(ValidateCandidateTest, BarrierUsedButNeverInitialised) {
  const std::string source =
      "__global__ void k(uint64_t* bar) {\n"
      "  cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(bar, 128);\n"
      "}\n";
  const auto violations = ValidateCandidate(source, CuratedConstraints());
  ASSERT_EQ(violations.size(), 1u) << RenderViolations(violations);
  EXPECT_EQ(violations[0].constraint_id, "barrier.init_before_use");
  EXPECT_EQ(violations[0].line, 2);
}

TEST(ConstraintsFileTest, JsonRoundTripsAndMarkdownStaysWithinItsBudget) {
  std::vector<Constraint> constraints = CuratedConstraints();
  for (int i = 0; i < 200; ++i) {
    constraints.push_back({"mined.x." + std::to_string(i), "gmma", "Satisfy CUTLASS's check: m.",
                           "cute/x.hpp:" + std::to_string(i), "a == b"});
  }
  auto back = ConstraintsFromJson(ConstraintsToJson(constraints));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), constraints.size());
  const std::size_t first_mined = CuratedConstraints().size();
  EXPECT_EQ((*back)[first_mined].source, "cute/x.hpp:0");
  EXPECT_EQ((*back)[first_mined].condition, "a == b");

  const std::string md = RenderConstraintsMarkdown(constraints, 4096);
  EXPECT_LE(md.size(), 4096u);
  // The curated rules come first and all fit; the tail says how many were left out.
  EXPECT_NE(md.find("- Compile warpgroup-MMA"), std::string::npos);
  EXPECT_NE(md.find("- Satisfy CUTLASS's check: m. (`a == b`, cute/x.hpp:0)\n"), std::string::npos);
  EXPECT_NE(md.find("more CUTLASS asserts in the constraints file.\n"), std::string::npos);
  EXPECT_FALSE(ConstraintsFromJson(Json{{"constraints", 3}}).ok());
}

TEST(MineConstraintsTest, FindsTheHopperAssertsWithTheirPlace) {
  const std::string include_dir = TestIncludeDir();
  if (include_dir.empty()) {
    GTEST_SKIP() << "needs a CUTLASS tree (run scripts/setup, or set KERNELPRO_CUTLASS_DIR)";
  }
  auto mined = MineConstraints(include_dir);
  ASSERT_TRUE(mined.ok()) << mined.status().message();
  auto find = [&](const std::string& message) { return testing::FindConstraint(*mined, message); };
  const Constraint* tma = find("SM90_TMA_LOAD requires the destination be shared memory.");
  ASSERT_NE(tma, nullptr);
  EXPECT_EQ(tma->category, "tma");
  EXPECT_EQ(tma->source.rfind("cute/atom/copy_traits_sm90_tma.hpp:", 0), 0u) << tma->source;
  EXPECT_EQ(tma->condition, "is_smem<TD>::value");
  // The line named holds that assert.
  const std::string file = tma->source.substr(0, tma->source.find(':'));
  const int line = std::stoi(tma->source.substr(tma->source.find(':') + 1));
  std::ifstream in(fs::path(include_dir) / file);
  std::string text;
  for (int i = 0; i < line; ++i) std::getline(in, text);
  EXPECT_NE(text.find("SM90_TMA_LOAD requires the destination be shared memory."),
            std::string::npos);
  EXPECT_NE(find("GMMA C and D value_type must match."), nullptr);
  // A message is mined once, however many files repeat it; commented-out asserts are not.
  int repeats = 0;
  for (const Constraint& c : *mined)
    repeats += c.text.find("Expected registers in MMA_Atom::call") != std::string::npos;
  EXPECT_EQ(repeats, 1);
  EXPECT_EQ(find("Expected gmem dst for SM90_TMA_STORE"), nullptr);
  EXPECT_FALSE(MineConstraints("/nonexistent").ok());
}

}  // namespace cutlass_constraints_test
}  // namespace kernelpro::cutlass
