#include "profile/sass.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/subprocess.h"
#include "core/tool_paths.h"

namespace kernelpro::profile {
namespace profile_sass_test {

namespace fs = std::filesystem;

const std::string kRoot = KERNELPRO_SOURCE_ROOT;
const std::string kH200 = kRoot + "/tests/fixtures/h200/";
const std::string kSass = kRoot + "/tests/fixtures/sass/";
const std::string kCorpus = kRoot + "/tests/fixtures/corpus/sass/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The view kernelpro builds from the recorded artifacts
// `<dir><stem>.{sass,resusage,symbols,nm}.txt` (a missing one counts as empty).
SassView Recorded(const std::string& dir, const std::string& stem, std::string_view arch = {}) {
  auto read_optional = [&](const std::string& suffix) {
    std::string path = dir + stem + suffix;
    return fs::exists(path) ? ReadFile(path) : std::string();
  };
  return CombineSass(read_optional(".sass.txt"), read_optional(".resusage.txt"),
                     read_optional(".symbols.txt"), read_optional(".nm.txt"), arch);
}

const SassKernel& Kernel(const SassView& view, const std::string& name) {
  for (const SassKernel& k : view.kernels) {
    if (k.name == name) return k;
  }
  ADD_FAILURE() << "no kernel " << name;
  static const SassKernel kMissing;
  return kMissing;
}

std::int64_t Category(const SassKernel& k, const std::string& name) {
  auto it = k.categories.find(name);
  return it == k.categories.end() ? 0 : it->second;
}

std::int64_t Opcode(const SassKernel& k, const std::string& name) {
  auto it = k.opcodes.find(name);
  return it == k.opcodes.end() ? 0 : it->second;
}

std::vector<std::string> KernelNames(const SassView& view) {
  std::vector<std::string> names;
  for (const SassKernel& k : view.kernels) names.push_back(k.name);
  return names;
}

// What a user relies on in any view, however mangled its input: the opcode histogram adds up to
// the instruction count, and no category counts more instructions than there are.
void ExpectConsistent(const SassView& view, const std::string& context) {
  for (const SassKernel& k : view.kernels) {
    std::int64_t sum = 0;
    for (const auto& [opcode, count] : k.opcodes) {
      EXPECT_GT(count, 0) << context << " " << k.name << " " << opcode;
      sum += count;
    }
    EXPECT_EQ(sum, k.total_instructions) << context << " " << k.name;
    for (const auto& [category, count] : k.categories) {
      EXPECT_GE(count, 0) << context << " " << k.name << " " << category;
      EXPECT_LE(count, k.total_instructions) << context << " " << k.name << " " << category;
    }
  }
}

// ---- The H200 fixtures (cuobjdump of CUDA 13.0, kernels built by load_inline for sm_90a) --------

constexpr char kSwishVec[] = "_Z10swish_vec4PK6float4PS_i";
constexpr char kSwishScalar[] = "_Z12swish_scalarPKfPfi";
constexpr char kWmma[] = "_Z9wmma_gemmPK6__halfS1_Pfi";
constexpr char kNaiveMatmul[] = "_Z12naive_matmulPKfS0_Pfi";
constexpr char kStridedCopy[] = "_Z15transpose_naivePKfPfi";

TEST(SassH200Test, VectorisedSwishUses128BitAccessesAndAThirdOfTheInstructions) {
  SassView vec = Recorded(kH200, "k_swish_vec");
  SassView scalar = Recorded(kH200, "k_swish_scalar");
  ASSERT_EQ(vec.kernels.size(), 1u);
  ASSERT_EQ(scalar.kernels.size(), 1u);
  const SassKernel& v = vec.kernels[0];
  const SassKernel& s = scalar.kernels[0];
  EXPECT_EQ(v.name, kSwishVec);
  EXPECT_EQ(s.name, kSwishScalar);
  EXPECT_EQ(v.total_instructions, 49);
  EXPECT_EQ(s.total_instructions, 144);
  EXPECT_EQ(Category(v, "global_load"), 1);
  EXPECT_EQ(Category(v, "global_load_128"), 1);   // LDG.E.128.CONSTANT
  EXPECT_EQ(Category(v, "global_store_128"), 1);  // STG.E.128
  EXPECT_EQ(Category(v, "global_load_32"), 0);
  EXPECT_EQ(Category(s, "global_load_32"), 1);  // LDG.E
  EXPECT_EQ(Category(s, "global_store_32"), 1);
  EXPECT_EQ(Category(s, "global_load_128"), 0);
}

TEST(SassH200Test, IeeeDivisionShowsAsFfmaRefinementWhileFastDivideIsOneRcpPerElement) {
  const SassKernel s = Recorded(kH200, "k_swish_scalar").kernels.at(0);
  const SassKernel v = Recorded(kH200, "k_swish_vec").kernels.at(0);
  // 17 FFMA plus FFMA.RM / .RP / .RZ / .SAT of the division's slow path: all count as ffma.
  EXPECT_EQ(Category(s, "ffma"), 22);
  EXPECT_EQ(Opcode(s, "FFMA"), 22);
  EXPECT_EQ(Category(s, "mufu"), 4);
  EXPECT_EQ(Category(s, "mufu_rcp"), 2);  // fast path and slow path of one division
  EXPECT_EQ(Category(s, "mufu_ex2"), 1);
  EXPECT_EQ(Category(s, "mufu_rsq"), 1);
  EXPECT_EQ(Category(s, "fadd"), 3);
  // __fdividef and __expf on a float4: one MUFU.RCP and one MUFU.EX2 per element, no FFMA.
  EXPECT_EQ(Category(v, "ffma"), 0);
  EXPECT_EQ(Category(v, "fmul"), 16);
  EXPECT_EQ(Category(v, "mufu"), 8);
  EXPECT_EQ(Category(v, "mufu_rcp"), 4);
  EXPECT_EQ(Category(v, "mufu_ex2"), 4);
  EXPECT_EQ(Category(v, "fadd"), 4);
}

TEST(SassH200Test, WmmaGemmUsesWarpLevelHmmaNotHopperWgmma) {
  const SassKernel k = Recorded(kH200, "k_wmma").kernels.at(0);
  EXPECT_EQ(k.name, kWmma);
  EXPECT_EQ(k.total_instructions, 228);
  EXPECT_EQ(Category(k, "tensor_hmma"), 10);  // HMMA.16816.F32
  EXPECT_EQ(Opcode(k, "HMMA"), 10);
  EXPECT_EQ(Opcode(k, "MOVM"), 20);
  EXPECT_EQ(Category(k, "tensor_wgmma"), 0);
  EXPECT_EQ(Category(k, "global_load_32"), 40);
  EXPECT_EQ(Category(k, "global_store_64"), 4);
  EXPECT_EQ(Category(k, "shared_load"), 0);
  EXPECT_EQ(k.registers, 40);
}

TEST(SassH200Test, NaiveMatmulIsPlainFfmaAndLoadsWithNoLibraryCalls) {
  SassView view = Recorded(kH200, "k_naive_matmul");
  ASSERT_EQ(view.kernels.size(), 1u);
  const SassKernel& k = view.kernels[0];
  EXPECT_EQ(k.name, kNaiveMatmul);
  EXPECT_EQ(k.total_instructions, 203);
  EXPECT_EQ(Category(k, "ffma"), 29);
  EXPECT_EQ(Category(k, "global_load"), 58);
  EXPECT_EQ(Category(k, "global_store"), 1);
  for (const char* tensor : {"tensor_wgmma", "tensor_hmma", "tensor_imma", "tensor_dmma"}) {
    EXPECT_EQ(Category(k, tensor), 0) << tensor;
  }
  // nm -D lists 6371 symbols, __cudaLaunchKernel among them, but nothing from cuBLAS or cuDNN.
  EXPECT_TRUE(view.library_calls.empty());
}

TEST(SassH200Test, StridedCopyIsOneScalarLoadAndStore) {
  const SassKernel k = Recorded(kH200, "k_strided_copy").kernels.at(0);
  EXPECT_EQ(k.name, kStridedCopy);
  EXPECT_EQ(k.total_instructions, 24);  // 32 instruction slots, 8 of them NOP padding
  EXPECT_EQ(Opcode(k, "NOP"), 0);
  EXPECT_EQ(Opcode(k, "EXIT"), 2);  // `@P0 EXIT` counts under EXIT
  EXPECT_EQ(Opcode(k, "IMAD"), 6);  // IMAD and IMAD.WIDE share a base
  EXPECT_EQ(Category(k, "global_load_32"), 1);
  EXPECT_EQ(Category(k, "global_store_32"), 1);
}

TEST(SassH200Test, ResourceUsageArchAndEntryPointOfEachCase) {
  struct Case {
    const char* stem;
    const char* entry;
    int registers;
  };
  for (const Case& c :
       {Case{"k_naive_matmul", kNaiveMatmul, 32}, Case{"k_strided_copy", kStridedCopy, 10},
        Case{"k_swish_scalar", kSwishScalar, 16}, Case{"k_swish_vec", kSwishVec, 18},
        Case{"k_wmma", kWmma, 40}}) {
    SassView view = Recorded(kH200, c.stem);
    EXPECT_EQ(view.arch, "sm_90a") << c.stem;
    // swish_scalar's symbols also hold the division slow path, a weak STT_FUNC: not an entry.
    EXPECT_EQ(view.entry_points, std::vector<std::string>{c.entry}) << c.stem;
    ASSERT_EQ(view.kernels.size(), 1u) << c.stem;
    EXPECT_EQ(view.kernels[0].registers, c.registers) << c.stem;
    EXPECT_EQ(view.kernels[0].stack_bytes, 0) << c.stem;
    EXPECT_EQ(view.kernels[0].shared_bytes, 0) << c.stem;
    EXPECT_EQ(view.kernels[0].local_bytes, 0) << c.stem;
    ExpectConsistent(view, c.stem);
  }
}

// ---- Kernels compiled here (tests/fixtures/sass, README.md there; cuobjdump of CUDA 13.5) ----

TEST(SassRecordedTest, CpAsyncOnAmpereIsLdgstsWithCommitAndWait) {
  SassView view = Recorded(kSass, "cp_async.sm_80");
  EXPECT_EQ(view.arch, "sm_80");  // a bare cubin's dump names it only in "code for sm_80"
  const SassKernel& k = Kernel(view, "_Z13cp_async_tilePK6float4PS_i");
  EXPECT_EQ(Category(k, "ldgsts"), 1);         // LDGSTS.E.BYPASS.128
  EXPECT_EQ(Category(k, "async_barrier"), 2);  // LDGDEPBAR + DEPBAR.LE
  EXPECT_EQ(Category(k, "global_load"), 0);    // the copy is not an LDG
  EXPECT_EQ(Category(k, "barrier"), 1);
  EXPECT_EQ(Category(k, "shared_load"), 1);
  EXPECT_EQ(Category(k, "global_store_128"), 1);
  EXPECT_EQ(k.total_instructions, 42);
  EXPECT_EQ(k.registers, 10);
  EXPECT_EQ(k.shared_bytes, 4096);
}

TEST(SassRecordedTest, WarpLevelMmaFlavoursOnAmpereAndHopper) {
  struct Counts {
    std::int64_t wmma, imma, dmma, bmma;
  };
  for (auto [stem, totals] : {std::pair{"mma_sync.sm_80", Counts{29, 21, 16, 21}},
                              std::pair{"mma_sync.sm_90a", Counts{32, 22, 16, 22}}}) {
    SassView view = Recorded(kSass, stem);
    const SassKernel& wmma = Kernel(view, "_Z9wmma_tilePK6__halfS1_Pf");
    const SassKernel& imma = Kernel(view, "_Z9imma_tilePKiS0_Pi");
    const SassKernel& dmma = Kernel(view, "_Z9dmma_tilePKdS0_Pd");
    const SassKernel& bmma = Kernel(view, "_Z9bmma_tilePKjS0_Pi");
    EXPECT_EQ(Category(wmma, "tensor_hmma"), 2) << stem;  // 16x16x16 = two HMMA.16816
    EXPECT_EQ(Category(imma, "tensor_imma"), 1) << stem;
    EXPECT_EQ(Category(dmma, "tensor_dmma"), 1) << stem;
    EXPECT_EQ(Category(bmma, "tensor_bmma"), 1) << stem;
    EXPECT_EQ(wmma.total_instructions, totals.wmma) << stem;
    EXPECT_EQ(imma.total_instructions, totals.imma) << stem;
    EXPECT_EQ(dmma.total_instructions, totals.dmma) << stem;
    EXPECT_EQ(bmma.total_instructions, totals.bmma) << stem;
    EXPECT_EQ(Category(dmma, "global_load_64"), 2) << stem;
    for (const SassKernel& k : view.kernels) {
      EXPECT_EQ(Category(k, "tensor_wgmma"), 0) << stem << " " << k.name;
    }
  }
}

TEST(SassRecordedTest, HopperWgmmaIsCountedForAllFourOperandTypes) {
  SassView view = Recorded(kSass, "wgmma.sm_90a");
  EXPECT_EQ(view.arch, "sm_90a");
  const SassKernel& f16 = Kernel(view, "_Z15wgmma_m64n64k16PK6__halfS1_Pf");
  EXPECT_EQ(Category(f16, "tensor_wgmma"), 1);  // HGMMA.64x64x16.F32
  EXPECT_EQ(Opcode(f16, "HGMMA"), 1);
  EXPECT_EQ(Category(f16, "tensor_hmma"), 0);
  EXPECT_EQ(Category(f16, "warpgroup_sync"), 2);      // WARPGROUP.ARRIVE + WARPGROUP.DEPBAR.LE
  EXPECT_EQ(Category(f16, "global_load_narrow"), 2);  // LDG.E.U16 of the halves
  EXPECT_EQ(Category(f16, "shared_store"), 2);
  EXPECT_EQ(f16.total_instructions, 81);
  EXPECT_EQ(f16.registers, 58);
  EXPECT_EQ(f16.shared_bytes, 5120);
  const SassKernel& other = Kernel(view, "_Z20wgmma_int_fp8_binarymmPiPf");
  EXPECT_EQ(Category(other, "tensor_wgmma"), 3);
  EXPECT_EQ(Opcode(other, "IGMMA"), 1);
  EXPECT_EQ(Opcode(other, "QGMMA"), 1);
  EXPECT_EQ(Opcode(other, "BGMMA"), 1);
  EXPECT_EQ(Category(other, "warpgroup_sync"), 5);  // ptxas adds arrives/waits around the MMAs
  EXPECT_EQ(other.total_instructions, 38);
  EXPECT_EQ(other.registers, 38);
}

TEST(SassRecordedTest, HopperBulkCopiesCountAsTmaWithTheirBarriers) {
  SassView view = Recorded(kSass, "tma.sm_90a");
  const SassKernel& k = Kernel(view, "_Z8tma_copy14CUtensorMap_stS_PKfPf");
  // UTMALDG, UTMASTG, UTMAPF, UTMAREDG, UBLKCP.S.G, UBLKCP.G.S, UBLKPF, UBLKRED: one each.
  EXPECT_EQ(Category(k, "tma"), 8);
  for (const char* op : {"UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UBLKPF", "UBLKRED"}) {
    EXPECT_EQ(Opcode(k, op), 1) << op;
  }
  EXPECT_EQ(Opcode(k, "UBLKCP"), 2);
  EXPECT_EQ(Category(k, "async_barrier"), 2);  // UTMACMDFLUSH (commit) + DEPBAR.LE (wait)
  EXPECT_EQ(Category(k, "mbarrier"), 4);       // SYNCS: init, arrive.expect_tx, 2 x try_wait
  EXPECT_EQ(Category(k, "barrier"), 2);
  EXPECT_EQ(Category(k, "ldgsts"), 0);
  EXPECT_EQ(Category(k, "global_load"), 0);  // every global byte moves by TMA
  EXPECT_EQ(k.total_instructions, 118);
  EXPECT_EQ(k.registers, 8);
  EXPECT_EQ(k.shared_bytes, 9224);
}

TEST(SassRecordedTest, SpillsAndLocalArraysShowAsLocalTrafficAndStackBytes) {
  SassView view = Recorded(kSass, "spill.sm_90a");
  const SassKernel& spill = Kernel(view, "_Z17register_pressurePKfPf");
  EXPECT_EQ(spill.registers, 32);  // capped by -maxrregcount=32
  EXPECT_EQ(Category(spill, "local_store"), 44);
  EXPECT_EQ(Category(spill, "local_load"), 46);  // LDL.LU x 44 + LDL x 2
  EXPECT_EQ(spill.stack_bytes, 144);
  EXPECT_EQ(spill.local_bytes, 0);  // cuobjdump books the spill slots as STACK, not LOCAL
  EXPECT_EQ(Category(spill, "ffma"), 80);
  EXPECT_EQ(spill.total_instructions, 261);
  const SassKernel& table = Kernel(view, "_Z13dynamic_indexPKiPfi");
  EXPECT_EQ(Category(table, "local_store"), 16);  // STL.128: the 64-float table
  EXPECT_EQ(Category(table, "local_load"), 1);    // table[idx & 63]
  EXPECT_EQ(table.stack_bytes, 256);
  EXPECT_EQ(table.total_instructions, 172);
}

TEST(SassRecordedTest, AccessWidthsShufflesBarriersAndAtomics) {
  SassView view = Recorded(kSass, "vector_copy.sm_90a");
  EXPECT_EQ(view.kernels.size(), 6u);
  struct Width {
    const char* kernel;
    const char* width;
  };
  for (const Width& w :
       {Width{"_Z11copy_float4PK6float4PS_i", "128"}, Width{"_Z11copy_doublePKdPdi", "64"},
        Width{"_Z10copy_floatPKfPfi", "32"}, Width{"_Z10copy_bytesPKhPhi", "narrow"}}) {
    const SassKernel& k = Kernel(view, w.kernel);
    EXPECT_EQ(Category(k, "global_load"), 1) << w.kernel;
    EXPECT_EQ(Category(k, std::string("global_load_") + w.width), 1) << w.kernel;
    EXPECT_EQ(Category(k, std::string("global_store_") + w.width), 1) << w.kernel;
  }
  EXPECT_EQ(Kernel(view, "_Z11copy_float4PK6float4PS_i").total_instructions, 17);
  EXPECT_EQ(Kernel(view, "_Z11copy_float4PK6float4PS_i").registers, 14);
  const SassKernel& sum = Kernel(view, "_Z9block_sumPKfPf");
  EXPECT_EQ(Category(sum, "shuffle"), 5);  // SHFL.DOWN 16, 8, 4, 2, 1
  EXPECT_EQ(Category(sum, "barrier"), 1);
  EXPECT_EQ(Category(sum, "shared_load"), 8);
  EXPECT_EQ(Category(sum, "shared_store"), 1);
  EXPECT_EQ(sum.total_instructions, 122);
  const SassKernel& histogram = Kernel(view, "_Z9histogramPKhPjS1_i");
  EXPECT_EQ(Category(histogram, "atomic"), 3);  // ATOMG.E.CAS, ATOMG.E.ADD, REDG.E.ADD
  EXPECT_EQ(Opcode(histogram, "REDG"), 1);
  EXPECT_EQ(Category(histogram, "atomic_shared"), 1);  // ATOMS.POPC.INC
  EXPECT_EQ(Category(histogram, "barrier"), 2);
  EXPECT_EQ(histogram.total_instructions, 52);
}

TEST(SassRecordedTest, MultiArchitectureDumpKeepsOneArchitectureNewestByDefault) {
  SassView newest = Recorded(kSass, "vector_copy.multiarch");
  EXPECT_EQ(newest.arch, "sm_90a");
  EXPECT_EQ(newest.kernels.size(), 6u);  // not 12: each kernel once
  EXPECT_EQ(Kernel(newest, "_Z9block_sumPKfPf").total_instructions, 122);
  EXPECT_EQ(Kernel(newest, "_Z9block_sumPKfPf").registers, 22);
  EXPECT_EQ(Kernel(newest, "_Z9histogramPKhPjS1_i").registers, 16);
  EXPECT_EQ(newest.entry_points.size(), 6u);

  SassView ampere = Recorded(kSass, "vector_copy.multiarch", "sm_80");
  EXPECT_EQ(ampere.arch, "sm_80");
  EXPECT_EQ(ampere.kernels.size(), 6u);
  EXPECT_EQ(Kernel(ampere, "_Z9block_sumPKfPf").total_instructions, 112);
  EXPECT_EQ(Kernel(ampere, "_Z9block_sumPKfPf").registers, 23);
  EXPECT_EQ(Kernel(ampere, "_Z9histogramPKhPjS1_i").registers, 14);
  EXPECT_EQ(Opcode(Kernel(ampere, "_Z9histogramPKhPjS1_i"), "RED"), 1);  // Ampere spells it RED

  Result<SassView> missing =
      ParseSassDump(ReadFile(kSass + "vector_copy.multiarch.sass.txt"), "sm_75");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("sm_80, sm_90a"), std::string::npos)
      << missing.status().message();
}

TEST(SassRecordedTest, SharedObjectCallingCublasCublasLtAndCudnn) {
  SassView view = Recorded(kSass, "library_calls");
  EXPECT_EQ(view.library_calls,
            (std::vector<std::string>{"cublasCreate_v2", "cublasDestroy_v2", "cublasGemmEx",
                                      "cublasLtCreate", "cublasLtDestroy", "cublasLtMatmul",
                                      "cudnnCreate", "cudnnDestroy"}));
  EXPECT_EQ(view.entry_points, std::vector<std::string>{"_Z5scalePffi"});
  // The .so holds an empty sm_90a ELF besides the kernel's: only one kernel comes out.
  ASSERT_EQ(view.kernels.size(), 1u);
  EXPECT_EQ(view.kernels[0].total_instructions, 17);
  EXPECT_EQ(view.kernels[0].registers, 8);
}

TEST(SassRecordedTest, EveryRecordedViewIsConsistent) {
  for (const char* stem :
       {"cp_async.sm_80", "mma_sync.sm_80", "mma_sync.sm_90a", "wgmma.sm_90a", "tma.sm_90a",
        "spill.sm_90a", "vector_copy.sm_90a", "vector_copy.multiarch", "library_calls"}) {
    SassView view = Recorded(kSass, stem);
    ExpectConsistent(view, stem);
    EXPECT_EQ(view.entry_points.size(), view.kernels.size()) << stem;
    for (const SassKernel& k : view.kernels) {
      EXPECT_GT(k.total_instructions, 0) << stem << " " << k.name;
      EXPECT_GT(k.registers, 0) << stem << " " << k.name;
      for (const std::string& category : SassCategoryNames()) {
        EXPECT_TRUE(k.categories.contains(category)) << stem << " " << k.name << " " << category;
      }
    }
  }
}

// ---- Parser behaviour on hand-written input --------------------------------------------------

constexpr char kTwoFunctions[] = R"(
	code for sm_90a
		Function : _Z6helperv
        /*0000*/                   FADD R1, R2, R3 ;    /* 0x0 */
        /*0010*/                   RET.REL.NODEC R20 0x0 ;    /* 0x0 */
		Function : _Z6kernelv
        /*0000*/              @!PT LDS RZ, [RZ] ;    /* 0x0 */
        /*0010*/                   WARPSYNC.ALL ;    /* 0x0 */
        /*0020*/                   BSSY B0, 0x40 ;    /* 0x0 */
        /*0030*/                   BSYNC B0 ;    /* 0x0 */
        /*0040*/                   LDG.E.ENL2.256 R4, desc[UR4][R2.64] ;    /* 0x0 */
        /*0050*/                   EXIT ;    /* 0x0 */
)";

TEST(SassParserTest, EntryKernelsComeFirstThenDeviceFunctions) {
  constexpr char kResUsage[] = R"(
 Function _Z6helperv:
  REG:4 STACK:0 SHARED:0 LOCAL:0
 Function _Z7orphanv:
  REG:9 STACK:32 SHARED:64 LOCAL:8
 Function _Z6kernelv:
  REG:12 STACK:0 SHARED:0 LOCAL:0
)";
  constexpr char kSymbols[] =
      "STT_FUNC         STB_GLOBAL STO_ENTRY      _Z6kernelv\n"
      "STT_FUNC         STB_GLOBAL STO_ENTRY      _Z7orphanv\n";
  SassView view = CombineSass(kTwoFunctions, kResUsage, kSymbols, "");
  // _Z7orphanv has resource usage but no SASS: kept, after the dumped entry, with no histogram.
  EXPECT_EQ(KernelNames(view),
            (std::vector<std::string>{"_Z6kernelv", "_Z7orphanv", "_Z6helperv"}));
  EXPECT_EQ(view.kernels[0].registers, 12);
  EXPECT_EQ(view.kernels[1].registers, 9);
  EXPECT_EQ(view.kernels[1].stack_bytes, 32);
  EXPECT_EQ(view.kernels[1].shared_bytes, 64);
  EXPECT_EQ(view.kernels[1].local_bytes, 8);
  EXPECT_EQ(view.kernels[1].total_instructions, 0);
  EXPECT_EQ(view.kernels[2].registers, 4);
}

TEST(SassParserTest, WarpSyncIsNotABarrierAndWiderLoadsGetTheirOwnWidth) {
  Result<SassView> view = ParseSassDump(kTwoFunctions);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  const SassKernel& k = Kernel(*view, "_Z6kernelv");
  EXPECT_EQ(Category(k, "warp_sync"), 1);
  EXPECT_EQ(Category(k, "barrier"), 0);      // neither WARPSYNC nor BSSY/BSYNC
  EXPECT_EQ(Category(k, "shared_load"), 1);  // predicated off with @!PT, still a static instruction
  EXPECT_EQ(Category(k, "global_load_256"), 1);
  EXPECT_EQ(Category(k, "global_load_128"), 0);
  EXPECT_EQ(k.total_instructions, 6);
}

TEST(SassParserTest, DuplicateNamesMatchResourceUsageInOrder) {
  // Two translation units, each with a file-local kernel of the same mangled name.
  std::string dump = std::string("\tcode for sm_90a\n") +
                     "\t\tFunction : _ZN12_GLOBAL__N_11kEv\n"
                     "        /*0000*/  EXIT ;  /* 0x0 */\n"
                     "\t\tFunction : _ZN12_GLOBAL__N_11kEv\n"
                     "        /*0000*/  NOP ;  /* 0x0 */\n"
                     "        /*0010*/  EXIT ;  /* 0x0 */\n";
  std::string res =
      " Function _ZN12_GLOBAL__N_11kEv:\n  REG:6 STACK:0 SHARED:0 LOCAL:0\n"
      " Function _ZN12_GLOBAL__N_11kEv:\n  REG:7 STACK:0 SHARED:0 LOCAL:0\n";
  SassView view = CombineSass(dump, res, "", "");
  ASSERT_EQ(view.kernels.size(), 2u);
  EXPECT_EQ(view.kernels[0].registers, 6);
  EXPECT_EQ(view.kernels[1].registers, 7);
}

TEST(SassParserTest, ReadsBothCuobjdumpSymbolFormats) {
  EXPECT_EQ(ParseEntryPoints(ReadFile(kH200 + "k_swish_scalar.symbols.txt")),
            std::vector<std::string>{kSwishScalar});  // CUDA 13.0: STT_FUNC STB_GLOBAL STO_ENTRY
  EXPECT_EQ(ParseEntryPoints(ReadFile(kSass + "spill.sm_90a.symbols.txt")),
            (std::vector<std::string>{"_Z17register_pressurePKfPf",
                                      "_Z13dynamic_indexPKiPfi"}));  // CUDA 13.5: FUNC GLOBAL ENTRY
}

TEST(SassParserTest, NothingResemblingSassIsInvalidArgument) {
  for (const std::string& text :
       {std::string(), std::string("hello\nworld\n"), ReadFile(kH200 + "k_naive_matmul.nm.txt")}) {
    Result<SassView> view = ParseSassDump(text);
    ASSERT_FALSE(view.ok());
    EXPECT_EQ(view.status().code(), Status::Code::kInvalidArgument);
  }
  // CombineSass still returns what the other texts give.
  SassView view = CombineSass("", "", ReadFile(kH200 + "k_wmma.symbols.txt"), "");
  EXPECT_TRUE(view.kernels.empty());
  EXPECT_EQ(view.entry_points, std::vector<std::string>{kWmma});
}

// ---- The corpus of awkward inputs -------------------------------------------------------------

TEST(SassCorpusTest, EveryCorpusFileParsesWithoutCrashing) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    std::string text = ReadFile(entry.path().string());
    std::string name = entry.path().filename().string();
    ++files;
    EXPECT_NO_THROW({
      Result<SassView> view = ParseSassDump(text);
      if (view.ok()) ExpectConsistent(*view, name);
      SassView combined = CombineSass(text, text, text, text);
      ExpectConsistent(combined, name);
      ParseEntryPoints(text);
      ParseLibraryCalls(text);
    }) << name;
  }
  EXPECT_GE(files, 10);
}

TEST(SassCorpusTest, EmptyGarbageAndBareInstructionsAreRejected) {
  for (const char* name : {"empty.txt", "garbage.bin", "instructions_without_function.sass.txt"}) {
    Result<SassView> view = ParseSassDump(ReadFile(kCorpus + name));
    EXPECT_FALSE(view.ok()) << name;
  }
}

TEST(SassCorpusTest, DumpCutMidLineKeepsTheCompleteLines) {
  // k_swish_vec cut inside its 12th instruction ("LDG.E.1..."): the 11 before it count.
  Result<SassView> view = ParseSassDump(ReadFile(kCorpus + "truncated_mid_line.sass.txt"));
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->kernels.size(), 1u);
  EXPECT_EQ(view->kernels[0].name, kSwishVec);
  EXPECT_EQ(view->kernels[0].total_instructions, 11);
  EXPECT_EQ(Category(view->kernels[0], "global_load"), 0);
}

TEST(SassCorpusTest, CrlfLineEndingsReadLikeLf) {
  Result<SassView> crlf = ParseSassDump(ReadFile(kCorpus + "crlf.sass.txt"));
  Result<SassView> lf = ParseSassDump(ReadFile(kH200 + "k_strided_copy.sass.txt"));
  ASSERT_TRUE(crlf.ok() && lf.ok());
  ASSERT_EQ(crlf->kernels.size(), 1u);
  EXPECT_EQ(crlf->kernels[0].name, lf->kernels[0].name);
  EXPECT_EQ(crlf->kernels[0].opcodes, lf->kernels[0].opcodes);
  EXPECT_EQ(crlf->arch, "sm_90a");
}

TEST(SassCorpusTest, CorruptBytesDropOnlyTheirOwnLines) {
  // Two instructions of k_strided_copy have NUL / 0xff bytes inside their mnemonic.
  Result<SassView> view = ParseSassDump(ReadFile(kCorpus + "nul_bytes.sass.txt"));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->kernels.at(0).total_instructions, 22);  // 24 in the clean dump
  EXPECT_EQ(Category(view->kernels[0], "global_load"), 0);
  EXPECT_EQ(Category(view->kernels[0], "global_store"), 1);
}

TEST(SassCorpusTest, MalformedLinesAroundAFunctionAreSkipped) {
  Result<SassView> view = ParseSassDump(ReadFile(kCorpus + "function_without_name.sass.txt"));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->arch, "sm_90a");
  ASSERT_EQ(view->kernels.size(), 1u);  // the nameless "Function :" block is dropped
  EXPECT_EQ(view->kernels[0].name, "_Z4realv");
  EXPECT_EQ(view->kernels[0].total_instructions, 3);  // FFMA, @!PT LDG.E.64, EXIT
  EXPECT_EQ(Category(view->kernels[0], "global_load_64"), 1);

  Result<SassView> headers = ParseSassDump(ReadFile(kCorpus + "headers_only.sass.txt"));
  ASSERT_TRUE(headers.ok());
  EXPECT_EQ(headers->arch, "sm_90a");
  EXPECT_TRUE(headers->kernels.empty());
}

TEST(SassCorpusTest, OutOfRangeResourceNumbersStayUnknown) {
  SassView view;
  ApplyResourceUsage(ReadFile(kCorpus + "resusage_bad_numbers.txt"), view);
  EXPECT_EQ(view.arch, "sm_90a");
  ASSERT_EQ(KernelNames(view), (std::vector<std::string>{"_Z3bigv", "_Z4hugev", "_Z3okv"}));
  EXPECT_EQ(view.kernels[0].registers, -1);
  EXPECT_EQ(view.kernels[0].stack_bytes, -1);
  EXPECT_EQ(view.kernels[0].shared_bytes, -1);
  EXPECT_EQ(view.kernels[1].registers, -1);  // 2^32 does not fit
  EXPECT_EQ(view.kernels[1].stack_bytes, 9223372036854775807);
  EXPECT_EQ(view.kernels[1].shared_bytes, -1);  // 2^63 does not fit
  EXPECT_EQ(view.kernels[1].local_bytes, 0);
  EXPECT_EQ(view.kernels[2].registers, 12);
  EXPECT_EQ(view.kernels[2].stack_bytes, 16);
}

TEST(SassCorpusTest, OddSymbolAndNmLines) {
  EXPECT_EQ(ParseEntryPoints(ReadFile(kCorpus + "symbols_odd_lines.txt")),
            (std::vector<std::string>{"_Z5firstv", "_Z6secondv", "_Z6secon"}));
  EXPECT_EQ(
      ParseLibraryCalls(ReadFile(kCorpus + "nm_odd_lines.txt")),
      (std::vector<std::string>{"cublasGemmEx", "cublasLtCreate", "cudnnCreate", "cudnnDestroy"}));
}

// ---- Truncation and mutation of every fixture ---------------------------------------------------

std::vector<std::pair<std::string, std::string>> AllFixtureTexts() {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const std::string& dir : {kH200, kSass}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::string name = entry.path().filename().string();
      if (name.ends_with(".sass.txt") || name.ends_with(".resusage.txt") ||
          name.ends_with(".symbols.txt") || name.ends_with(".nm.txt")) {
        texts.emplace_back(name, ReadFile(entry.path().string()));
      }
    }
  }
  return texts;
}

std::int64_t TotalInstructions(const SassView& view) {
  std::int64_t total = 0;
  for (const SassKernel& k : view.kernels) total += k.total_instructions;
  return total;
}

void FeedAllParsers(const std::string& text, const std::string& context) {
  Result<SassView> view = ParseSassDump(text);
  if (view.ok()) {
    ExpectConsistent(*view, context);
    ApplyResourceUsage(text, *view);
  }
  ExpectConsistent(CombineSass(text, text, text, text), context);
  ParseEntryPoints(text);
  ParseLibraryCalls(text);
}

TEST(SassRobustnessTest, EveryPrefixOfEveryFixture) {
  auto texts = AllFixtureTexts();
  ASSERT_GE(texts.size(), 30u);
  for (const auto& [name, text] : texts) {
    Result<SassView> full = ParseSassDump(text);
    std::size_t step = std::max<std::size_t>(1, text.size() / 300);
    for (std::size_t n = 0; n <= text.size(); n += step) {
      std::string prefix = text.substr(0, n);
      std::string context = name + " cut at " + std::to_string(n);
      ASSERT_NO_THROW(FeedAllParsers(prefix, context)) << context;
      // A cut dump never shows more code than the whole one (one architecture per file here).
      Result<SassView> part = ParseSassDump(prefix);
      if (full.ok() && part.ok() && name.find("multiarch") == std::string::npos) {
        EXPECT_LE(part->kernels.size(), full->kernels.size()) << context;
        EXPECT_LE(TotalInstructions(*part), TotalInstructions(*full)) << context;
      }
    }
  }
}

TEST(SassRobustnessTest, RandomMutationsOfFixtures) {
  auto texts = AllFixtureTexts();
  ASSERT_FALSE(texts.empty());
  // Fragments that steer a mutation into the parsers' interesting states.
  const std::vector<std::string> fragments = {"Function : ",
                                              "Fatbin elf code:\n",
                                              "Fatbin ptx code:\n",
                                              "arch = sm_",
                                              "code for ",
                                              "/*0000*/ ",
                                              ";",
                                              "\n",
                                              "@P0 ",
                                              "@!",
                                              "REG:",
                                              ":",
                                              "STT_FUNC STB_GLOBAL STO_ENTRY ",
                                              "FUNC GLOBAL DEFAULT ENTRY ",
                                              " U cublas",
                                              "@",
                                              ".",
                                              "*/",
                                              "/*",
                                              std::string(1, '\0'),
                                              "\r",
                                              "\xff\xfe",
                                              "LDG.E.",
                                              "MUFU.",
                                              "STG.E.U8 "};
  std::mt19937 rng(20240607);
  for (int i = 0; i < 3000; ++i) {
    const auto& [name, original] = texts[rng() % texts.size()];
    std::string text = original;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      std::size_t pos = text.empty() ? 0 : rng() % (text.size() + 1);
      switch (rng() % 5) {
        case 0:  // overwrite a byte
          if (pos < text.size()) text[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:  // insert a fragment
          text.insert(pos, fragments[rng() % fragments.size()]);
          break;
        case 2:  // delete a run
          if (pos < text.size()) text.erase(pos, 1 + rng() % 200);
          break;
        case 3:  // duplicate a run
          if (pos < text.size()) text.insert(pos, text.substr(pos, 1 + rng() % 500));
          break;
        case 4:  // cut the end
          text.resize(pos);
          break;
      }
    }
    std::string context = name + " mutation " + std::to_string(i);
    ASSERT_NO_THROW(FeedAllParsers(text, context)) << context;
  }
}

// ---- Compiling and disassembling for real, when the tools are here ----------------------------

class SassLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nvcc_ = FindTool("nvcc");
    cuobjdump_ = FindTool("cuobjdump");
    if (nvcc_.empty() || cuobjdump_.empty()) {
      GTEST_SKIP() << "needs nvcc and cuobjdump (run scripts/setup, or set KERNELPRO_NVCC / "
                      "KERNELPRO_CUOBJDUMP); found nvcc='"
                   << nvcc_ << "' cuobjdump='" << cuobjdump_ << "'";
    }
    dir_ = fs::temp_directory_path() /
           ("kernelpro_sass_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // Compiles tests/fixtures/sass/<source> with nvcc and these arguments into `output`.
  std::string Compile(const std::string& source, const std::string& output,
                      const std::vector<std::string>& args) {
    ProcessOptions options;
    options.argv = {nvcc_};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    std::string out = (dir_ / output).string();
    options.argv.insert(options.argv.end(), {"-o", out, kSass + source});
    options.limits.wall_timeout = std::chrono::seconds(300);
    Result<ProcessResult> run = RunProcess(options);
    EXPECT_TRUE(run.ok());
    if (run.ok()) {
      EXPECT_TRUE(run->exited && run->exit_code == 0)
          << "nvcc " << source << ": " << run->Describe() << "\n"
          << run->stderr_text;
    }
    return out;
  }

  std::string nvcc_, cuobjdump_;
  fs::path dir_;
};

TEST_F(SassLiveTest, RecompiledKernelsShowTheirSignatureInstructions) {
  struct Build {
    const char* source;
    const char* arch;
    std::vector<std::string> extra;
    const char* kernel;
    std::vector<const char*> nonzero;
  };
  const std::vector<Build> builds = {
      {"cp_async.cu", "sm_80", {}, "_Z13cp_async_tilePK6float4PS_i", {"ldgsts", "async_barrier"}},
      {"mma_sync.cu", "sm_80", {}, "_Z9wmma_tilePK6__halfS1_Pf", {"tensor_hmma"}},
      {"mma_sync.cu", "sm_90a", {}, "_Z9dmma_tilePKdS0_Pd", {"tensor_dmma"}},
      {"wgmma.cu",
       "sm_90a",
       {},
       "_Z15wgmma_m64n64k16PK6__halfS1_Pf",
       {"tensor_wgmma", "warpgroup_sync"}},
      {"tma.cu", "sm_90a", {}, "_Z8tma_copy14CUtensorMap_stS_PKfPf", {"tma", "mbarrier"}},
      {"spill.cu",
       "sm_90a",
       {"-maxrregcount=32"},
       "_Z17register_pressurePKfPf",
       {"local_store", "local_load"}},
      {"vector_copy.cu",
       "sm_90a",
       {},
       "_Z11copy_float4PK6float4PS_i",
       {"global_load_128", "global_store_128"}},
  };
  for (const Build& b : builds) {
    std::vector<std::string> args = {"-cubin", std::string("-arch=") + b.arch};
    args.insert(args.end(), b.extra.begin(), b.extra.end());
    std::string cubin = Compile(b.source, std::string(b.source) + "." + b.arch + ".cubin", args);
    Result<SassView> view = AnalyzeSharedObject(cubin);
    ASSERT_TRUE(view.ok()) << b.source << ": " << view.status().ToString();
    EXPECT_EQ(view->arch, b.arch) << b.source;
    const SassKernel& k = Kernel(*view, b.kernel);
    for (const char* category : b.nonzero) {
      EXPECT_GT(Category(k, category), 0) << b.source << " " << b.arch << " " << category;
    }
    EXPECT_GT(k.registers, 0) << b.source;
    ExpectConsistent(*view, b.source);
  }
}

TEST_F(SassLiveTest, SharedObjectGivesEntryKernelsResourcesAndNoLibraryCalls) {
  std::string so = Compile("vector_copy.cu", "vector_copy.so",
                           {"-shared", "-Xcompiler", "-fPIC", "-arch=sm_90a"});
  Result<SassView> view = AnalyzeSharedObject(so);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->arch, "sm_90a");
  EXPECT_EQ(view->entry_points.size(), 6u);
  EXPECT_EQ(view->kernels.size(), 6u);
  const SassKernel& copy = Kernel(*view, "_Z11copy_float4PK6float4PS_i");
  EXPECT_EQ(Category(copy, "global_load_128"), 1);
  EXPECT_GT(copy.registers, 0);
  EXPECT_EQ(copy.stack_bytes, 0);
  EXPECT_TRUE(view->library_calls.empty());
  Result<SassView> wrong_arch = AnalyzeSharedObject(so, "sm_80");
  EXPECT_EQ(wrong_arch.status().code(), Status::Code::kInvalidArgument);
}

TEST(SassToolTest, FileWithoutDeviceCodeGivesAnEmptyView) {
  if (FindTool("cuobjdump").empty()) GTEST_SKIP() << "cuobjdump not found (run scripts/setup)";
  Result<SassView> view = AnalyzeSharedObject(fs::read_symlink("/proc/self/exe").string());
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_TRUE(view->kernels.empty());
  EXPECT_TRUE(view->entry_points.empty());
}

TEST(SassToolTest, MissingFileIsNotFound) {
  if (FindTool("cuobjdump").empty()) GTEST_SKIP() << "cuobjdump not found (run scripts/setup)";
  Result<SassView> view = AnalyzeSharedObject("/nonexistent/candidate.so");
  EXPECT_EQ(view.status().code(), Status::Code::kNotFound);
}

TEST(SassToolTest, MissingCuobjdumpIsUnavailableAndSaysHowToGetIt) {
  const char* old = std::getenv("KERNELPRO_CUOBJDUMP");
  std::string saved = old ? old : "";
  ::setenv("KERNELPRO_CUOBJDUMP", "/nonexistent/cuobjdump", 1);
  Result<SassView> view = AnalyzeSharedObject(kSass + "vector_copy.cu");
  if (old) {
    ::setenv("KERNELPRO_CUOBJDUMP", saved.c_str(), 1);
  } else {
    ::unsetenv("KERNELPRO_CUOBJDUMP");
  }
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(view.status().message().find("scripts/setup"), std::string::npos);
  EXPECT_NE(view.status().message().find("KERNELPRO_CUOBJDUMP"), std::string::npos);
}

}  // namespace profile_sass_test
}  // namespace kernelpro::profile
