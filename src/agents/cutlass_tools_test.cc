// The programmer's CUTLASS kit over the fixture tree (tests/fixtures/cutlass_tree, written for
// these tests) and, where scripts/setup installed it, the real CUTLASS tree: the tools it offers
// and their budgets, the constraints its prompt carries, the validator, and what the search
// memory keeps of the tool calls.
#include "agents/cutlass_tools.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kernelpro::agents {
namespace agents_cutlass_tools_test {

const std::string kFixtureRoot = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/cutlass_tree";

std::unique_ptr<CutlassKit> FixtureKit(CutlassKitOptions options = {}) {
  auto tree = cutlass::CutlassTreeAt(kFixtureRoot, "test");
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  auto kit = CutlassKit::Load(*tree, options);
  EXPECT_TRUE(kit.ok()) << kit.status().ToString();
  return kit.ok() ? std::move(*kit) : nullptr;
}

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

Result<std::string> Call(const ProgrammerTools& tools, const std::string& name, const Json& args) {
  return tools.handlers.at(name)(args);
}

TEST(CutlassKitTest, OffersFourToolsAndTellsTheModelTheirBudgets) {
  CutlassKitOptions options;
  options.search_budget = 3;
  auto kit = FixtureKit(options);
  ASSERT_NE(kit, nullptr);
  ProgrammerTools tools = kit->ForIteration();
  std::vector<std::string> names;
  for (const llm::ToolDefinition& d : tools.definitions) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"search_cutlass", "read_cutlass_file",
                                             "list_cutlass_directory", "check_smem_layout"}));
  for (const std::string& name : names) EXPECT_EQ(tools.handlers.count(name), 1u) << name;
  EXPECT_TRUE(Has(tools.instruction, "At most 3 searches in this iteration")) << tools.instruction;
  EXPECT_TRUE(Has(tools.instruction, "check_smem_layout"));
  EXPECT_TRUE(Has(tools.instruction, "(CUTLASS 9.8.7)")) << tools.instruction;  // the fixture's
  EXPECT_TRUE(tools.loop.answer_on_last_turn);

  // Without tools: the constraints and the validator only.
  CutlassKitOptions off;
  off.tools = false;
  auto quiet = FixtureKit(off);
  ASSERT_NE(quiet, nullptr);
  EXPECT_TRUE(quiet->ForIteration().definitions.empty());
  EXPECT_FALSE(quiet->constraints_markdown().empty());
}

TEST(CutlassKitTest, SearchesSpendTheIterationsBudgetAndReadsDoNot) {
  CutlassKitOptions options;
  options.search_budget = 2;
  auto kit = FixtureKit(options);
  ASSERT_NE(kit, nullptr);
  ProgrammerTools tools = kit->ForIteration();

  auto found = Call(tools, "search_cutlass", {{"regex", "SM90_64x\\d+x16_F32BF16BF16_SS"}});
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_TRUE(Has(*found, "cute/atom/mma_atom.hpp:6:struct SM90_64x128x16_F32BF16BF16_SS"))
      << *found;
  // A bad regex is refused for its arguments: it searched nothing and costs nothing.
  EXPECT_FALSE(Call(tools, "search_cutlass", {{"regex", "("}}).ok());
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(Call(tools, "read_cutlass_file",
                     {{"file", "cute/atom/mma_atom.hpp"}, {"start_line", 1}, {"end_line", 5}})
                    .ok());
  }
  EXPECT_TRUE(Call(tools, "list_cutlass_directory", {{"dir", "cute"}}).ok());
  EXPECT_TRUE(Call(tools, "search_cutlass", {{"regex", "MMA_Atom"}}).ok());
  auto spent = Call(tools, "search_cutlass", {{"regex", "tile_to_shape"}});
  ASSERT_FALSE(spent.ok());
  EXPECT_TRUE(Has(spent.status().message(), "search budget of this iteration is spent (2"))
      << spent.status().message();

  // The next iteration starts afresh.
  ProgrammerTools next = kit->ForIteration();
  EXPECT_TRUE(Call(next, "search_cutlass", {{"regex", "tile_to_shape"}}).ok());
}

TEST(CutlassKitTest, TheProbeRefusesCodeInItsArgumentsBeforeAnyCompile) {
  auto kit = FixtureKit();
  ASSERT_NE(kit, nullptr);
  ProgrammerTools tools = kit->ForIteration();
  auto refused = Call(tools, "check_smem_layout",
                      {{"atom", "GMMA::Layout_K_SW128_Atom<Element>{}; system(\"rm -rf /\")"},
                       {"tile_shape", "Shape<_128,_64>"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Has(refused.status().message(), "check_smem_layout")) << refused.status().message();
  auto missing = Call(tools, "check_smem_layout", {{"atom", "X{}"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Has(missing.status().message(), "missing \"tile_shape\""));
}

TEST(CutlassKitTest, TheValidatorRejectsBrokenCutlassCodeAndIgnoresOtherCode) {
  auto kit = FixtureKit();
  ASSERT_NE(kit, nullptr);
  const std::string plain = "_CU = r'''__global__ void k(float* y) {}'''\n";
  EXPECT_EQ(kit->Validate(plain), "");
  const std::string broken =
      "_CU = r'''\n#include <cute/tensor.hpp>\nusing Atom = cute::SM90_64x128x16_F32BF16BF16_SS;\n"
      "'''\n"
      "_ext = load_inline(name='g', cpp_sources='', cuda_sources=_CU,\n"
      "                   extra_cuda_cflags=['-gencode=arch=compute_90,code=sm_90'])\n";
  const std::string found = kit->Validate(broken);
  EXPECT_TRUE(Has(found, "no build was spent")) << found;
  EXPECT_TRUE(Has(found, "[build.sm90a]")) << found;
  EXPECT_TRUE(Has(found, "line 6")) << found;
  EXPECT_TRUE(IncludesCutlass(broken));
  EXPECT_TRUE(IncludesCutlass("#include \"cutlass/gemm/device/gemm.h\""));
  EXPECT_FALSE(IncludesCutlass("// uses cute-like layouts\n#include <cuda_fp16.h>"));
}

TEST(CutlassKitTest, TheConstraintsBlockIsBoundedAndHeaded) {
  CutlassKitOptions options;
  options.constraints_bytes = 1500;
  auto kit = FixtureKit(options);
  ASSERT_NE(kit, nullptr);
  const std::string& block = kit->constraints_markdown();
  EXPECT_TRUE(block.starts_with("# Non-negotiable constraints")) << block;
  EXPECT_LE(block.size(), 1500u);
}

TEST(ToolCallMemoryTest, ReadsBecomeKeyFilesAndFindsBecomeSearchFindings) {
  std::vector<ProgrammerToolCall> calls = {
      {"search_cutlass",
       {{"regex", "SM90_64x256x16_F32BF16BF16_SS"}},
       "2 matching lines in 1 file for /SM90_64x256x16_F32BF16BF16_SS/ (802 files searched):\n"
       "cute/atom/mma_traits_sm90_gmma.hpp-1833->\n"
       "cute/atom/mma_traits_sm90_gmma.hpp:1834:using SM90_64x256x16_F32BF16BF16_SS = X;\n",
       false},
      {"search_cutlass",
       {{"regex", "nothing"}},
       "0 matching lines in 0 files for /nothing/",
       false},
      {"read_cutlass_file",
       {{"file", "cute/atom/mma_traits_sm90_gmma.hpp"}, {"start_line", 1820}},
       "cute/atom/mma_traits_sm90_gmma.hpp lines 1820-1860 of 9000:\n1820  x\n",
       false},
      {"read_cutlass_file",
       {{"file", "cute/atom/mma_traits_sm90_gmma.hpp"}, {"start_line", 1}},
       "cute/atom/mma_traits_sm90_gmma.hpp lines 1-40 of 9000:\n1  x\n",
       false},
      {"read_cutlass_file", {{"file", "cute/nope.hpp"}}, "no such file", true},
      {"check_smem_layout",
       {{"atom", "GMMA::Layout_K_SW128_Atom<Element>{}"}, {"tile_shape", "Shape<_128,_64,_4>"}},
       "compiles: layout Sw<3,4,3> o ... over 32768 elements (64 KiB of cute::half_t)\nlayout: ...",
       false},
  };
  std::vector<MemoryEntry> entries = ToolCallMemory(calls, 3);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].section, MemorySection::kSearchFindings);
  EXPECT_EQ(entries[0].text,
            "2 matching lines in 1 file for /SM90_64x256x16_F32BF16BF16_SS/ (802 files searched): "
            "First: cute/atom/mma_traits_sm90_gmma.hpp:1834:using SM90_64x256x16_F32BF16BF16_SS "
            "= X;");
  EXPECT_EQ(entries[1].section, MemorySection::kSearchFindings);
  EXPECT_EQ(entries[1].text,
            "check_smem_layout of GMMA::Layout_K_SW128_Atom<Element>{} over Shape<_128,_64,_4>: "
            "compiles: layout Sw<3,4,3> o ... over 32768 elements (64 KiB of cute::half_t)");
  EXPECT_EQ(entries[2].section, MemorySection::kKeyFiles);
  EXPECT_EQ(entries[2].text,
            "cute/atom/mma_traits_sm90_gmma.hpp (lines 1820-1860, 1-40 were read)");
  for (const MemoryEntry& e : entries) EXPECT_EQ(e.iteration, 3);
}

// The real tree, where scripts/setup (or KERNELPRO_CUTLASS_DIR) provides it: the kit loads the
// whole include/ folder and mines its Hopper asserts.
TEST(CutlassKitTest, LoadsTheInstalledTree) {
  const char* env = std::getenv(cutlass::kCutlassDirVariable);
  auto tree = cutlass::LocateCutlass(env ? env : "", "", cutlass::SetupCutlassDir());
  if (!tree.ok()) GTEST_SKIP() << "no CUTLASS tree installed (scripts/setup installs one)";
  auto kit = CutlassKit::Load(*tree);
  ASSERT_TRUE(kit.ok()) << kit.status().ToString();
  EXPECT_GT((*kit)->constraints().size(), 50u);
  ProgrammerTools tools = (*kit)->ForIteration();
  auto found = Call(tools, "search_cutlass",
                    {{"regex", "struct MMA_64x256x16_F32BF16BF16_SS"}, {"path", "cute/arch/"}});
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_TRUE(Has(*found, "cute/arch/mma_sm90_gmma.hpp:")) << *found;
}

}  // namespace agents_cutlass_tools_test
}  // namespace kernelpro::agents
