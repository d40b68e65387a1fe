#include "cutlass/constraints.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/text.h"
#include "cutlass/epilogue_constraints.h"

namespace kernelpro::cutlass {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxConditionBytes = 120;

// The headers whose asserts bind Hopper code, in the order their constraints matter to a
// hand-written GMMA/TMA kernel. A path ending in '/' is a folder, with `prefix*` as the file match.
struct MinedSource {
  const char* path;    // relative to the include folder
  const char* prefix;  // for folders: only files whose name starts with this
  const char* category;
};
constexpr MinedSource kMinedSources[] = {
    {"cute/atom/mma_traits_sm90_gmma.hpp", "", "gmma"},
    {"cute/arch/mma_sm90_gmma.hpp", "", "gmma"},
    {"cute/arch/mma_sm90_desc.hpp", "", "gmma"},
    {"cute/atom/copy_traits_sm90_tma.hpp", "", "tma"},
    {"cute/atom/copy_traits_sm90_tma_swizzle.hpp", "", "tma"},
    {"cute/arch/copy_sm90_tma.hpp", "", "tma"},
    {"cute/arch/copy_sm90_desc.hpp", "", "tma"},
    {"cutlass/pipeline/sm90_pipeline.hpp", "", "pipeline"},
    {"cutlass/arch/barrier.h", "", "barrier"},
    {"cutlass/gemm/collective/", "sm90_", "collective"},
    {"cutlass/gemm/collective/builders/", "sm90_", "collective"},
    {"cutlass/epilogue/collective/", "sm90_", "epilogue"},
    {"cutlass/epilogue/collective/builders/", "sm90_", "epilogue"},
};

// The text of a source file with comments blanked (kept as spaces, newlines kept, so offsets and
// line numbers still match), strings left as they are: commented-out asserts are not constraints.
std::string BlankComments(const std::string& text) {
  std::string out = text;
  enum { kCode, kLine, kBlock, kString, kChar } state = kCode;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case kCode:
        if (c == '/' && next == '/') {
          state = kLine;
          out[i] = ' ';
        } else if (c == '/' && next == '*') {
          state = kBlock;
          out[i] = ' ';
        } else if (c == '"')
          state = kString;
        else if (c == '\'')
          state = kChar;
        break;
      case kLine:
        if (c == '\n')
          state = kCode;
        else
          out[i] = ' ';
        break;
      case kBlock:
        if (c == '*' && next == '/') {
          out[i] = ' ';
          out[i + 1] = ' ';
          ++i;
          state = kCode;
        } else if (c != '\n')
          out[i] = ' ';
        break;
      case kString:
        if (c == '\\')
          ++i;
        else if (c == '"')
          state = kCode;
        break;
      case kChar:
        if (c == '\\')
          ++i;
        else if (c == '\'')
          state = kCode;
        break;
    }
  }
  return out;
}

// The arguments of the call whose '(' is at `open`, split at top-level commas; empty when the
// parentheses never close. String literals are kept whole (their commas are not separators).
std::vector<std::string> CallArguments(const std::string& text, std::size_t open,
                                       std::size_t* end) {
  std::vector<std::string> args;
  std::string current;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      current += c;
      if (c == '\\' && i + 1 < text.size())
        current += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      current += c;
      continue;
    }
    if (c == '(') {
      if (depth++ > 0) current += c;
      continue;
    }
    if (c == ')') {
      if (--depth == 0) {
        args.push_back(current);
        *end = i;
        return args;
      }
      current += c;
      continue;
    }
    if (c == ',' && depth == 1) {
      args.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  return {};
}

// The concatenated string literal(s) of an assert's message argument, or "" when it is not one.
std::string StringLiteralValue(const std::string& argument) {
  static const std::regex kLiteral(R"re("((?:[^"\\]|\\.)*)")re");
  std::string value;
  for (auto it = std::sregex_iterator(argument.begin(), argument.end(), kLiteral);
       it != std::sregex_iterator(); ++it) {
    value += (*it)[1].str();
  }
  // Escapes a reader does not need: \n at the end of some messages, escaped quotes.
  value = std::regex_replace(value, std::regex(R"(\\n)"), " ");
  value = std::regex_replace(value, std::regex(R"(\\(.))"), "$1");
  return std::string(Trim(CollapseWhitespace(value)));
}

std::vector<std::string> SourceFiles(const std::string& include_dir, const MinedSource& source) {
  const fs::path path = fs::path(include_dir) / source.path;
  std::vector<std::string> files;
  std::error_code ec;
  if (std::string(source.path).back() != '/') {
    if (fs::is_regular_file(path, ec)) files.push_back(source.path);
    return files;
  }
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.rfind(source.prefix, 0) == 0) {
      files.push_back(std::string(source.path) + name);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Stem(const std::string& relative) { return fs::path(relative).stem().string(); }

// A candidate is Python with CUDA inside string literals, so BlankComments' string tracking does
// not apply: per line, "//" outside a "..." on that line starts a comment, and /* */ blocks are
// blanked across lines (newlines kept).
std::string BlankCandidateComments(const std::string& text) {
  std::string out = text;
  // The module's docstring is prose about the candidate ("built for plain sm_90, ..."), not code.
  std::size_t start = out.find_first_not_of(" \t\r\n");
  if (start != std::string::npos &&
      (out.compare(start, 3, "\"\"\"") == 0 || out.compare(start, 3, "'''") == 0)) {
    const std::size_t close = out.find(out.substr(start, 3), start + 3);
    const std::size_t end = close == std::string::npos ? out.size() : close + 3;
    for (std::size_t i = start; i < end; ++i) {
      if (out[i] != '\n') out[i] = ' ';
    }
  }
  bool in_block = false;
  bool in_quote = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    if (c == '\n') {
      in_quote = false;
      continue;
    }
    if (in_block) {
      if (c == '*' && next == '/') {
        out[i] = out[i + 1] = ' ';
        ++i;
        in_block = false;
      } else {
        out[i] = ' ';
      }
      continue;
    }
    if (c == '"') in_quote = !in_quote;
    if (in_quote) continue;
    if (c == '/' && next == '*') {
      in_block = true;
      out[i] = ' ';
    } else if (c == '/' && next == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
      --i;
    }
  }
  return out;
}

// ---- The validator's checks --------------------------------------------------------------------

struct Line {
  int number;
  std::string text;
};

std::vector<Line> NumberedLines(const std::string& source) {
  std::vector<Line> lines;
  int n = 0;
  for (const std::string& text : SplitLines(source)) lines.push_back({++n, text});
  return lines;
}

// The first line matching `pattern` at or after line `from`, or 0.
int FirstLine(const std::vector<Line>& lines, const std::regex& pattern, int from = 1) {
  for (const Line& line : lines) {
    if (line.number >= from && std::regex_search(line.text, pattern)) return line.number;
  }
  return 0;
}

const std::regex& UsesGmma() {
  static const std::regex r(
      R"re(\bwgmma\b|\bGMMA::|\bSM90_\d+x\d+x\d+_|warpgroup_arrive|warpgroup_reg_(alloc|)re"
      R"re(dealloc)|setmaxnreg|)re"
      // CUTLASS 3's SM90 collectives and schedules build GMMA kernels without naming GMMA.
      R"re(\bKernelTmaWarpSpecialized|\bMainloopSm90|\barch::Sm90\b)re");
  return r;
}
const std::regex& UsesCute() {
  static const std::regex r(R"re(#\s*include\s*[<"](cute|cutlass)/)re");
  return r;
}
const std::regex& UsesTma() {
  static const std::regex r(
      R"re(\bSM90_TMA_(LOAD|STORE)|make_tma_copy|make_tma_atom|cp\.async\.bulk\.tensor|)re"
      R"re(CUtensorMap|TmaDescriptor)re");
  return r;
}
const std::regex& BarrierInit() {
  static const std::regex r(
      R"re(\b\w*[Bb]ar\w*::init\s*\(|\b\w*bar\w*(\[[^\]]*\])?\.init\s*\(|\bmbarrier\.init|)re"
      R"re(\bmbarrier_init\s*\(|initialize_barrier_array|\binit_barrier\s*\()re");
  return r;
}

void CheckArchitecture(const std::vector<Line>& lines, const ValidatorOptions& options,
                       std::vector<ConstraintViolation>* out) {
  if (FirstLine(lines, UsesGmma()) == 0) return;
  // sm_90 / compute_90 without the 'a', in flags or TORCH_CUDA_ARCH_LIST ("9.0" without "a").
  static const std::regex kPlain90(
      R"re(\b(sm|compute)_90(?![0-9a-z])|ARCH_LIST[^\n]*\b9\.0(?![0-9a])|arch=sm_90(?![0-9a]))re");
  if (int line = FirstLine(lines, kPlain90); line > 0) {
    out->push_back({"build.sm90a", line,
                    "this kernel uses warpgroup MMA (wgmma/GMMA), which exists only on sm_90a: "
                    "build with -gencode=arch=compute_90a,code=sm_90a (or -arch=sm_90a) instead of "
                    "sm_90"});
    return;
  }
  static const std::regex kSm90a(R"re(\b(sm|compute)_90a\b|9\.0a)re");
  if (!options.build_adds_cutlass_flags && FirstLine(lines, kSm90a) == 0) {
    out->push_back({"build.sm90a", FirstLine(lines, UsesGmma()),
                    "this kernel uses warpgroup MMA (wgmma/GMMA) but no flag selects sm_90a: add "
                    "\"-gencode=arch=compute_90a,code=sm_90a\" to extra_cuda_cflags"});
  }
}

void CheckCuteFlags(const std::vector<Line>& lines, const ValidatorOptions& options,
                    std::vector<ConstraintViolation>* out) {
  if (options.build_adds_cutlass_flags) return;
  const int include_line = FirstLine(lines, UsesCute());
  if (include_line == 0) return;
  static const std::regex kCflags(R"re(extra_cuda_cflags)re");
  const int cflags_line = FirstLine(lines, kCflags);
  static const std::regex kRelaxed(R"re(--expt-relaxed-constexpr)re");
  static const std::regex kStd(R"re(-std=c\+\+(17|2[0-9a-z]))re");
  std::vector<std::string> missing;
  if (FirstLine(lines, kRelaxed) == 0) missing.push_back("\"--expt-relaxed-constexpr\"");
  if (FirstLine(lines, kStd) == 0) missing.push_back("\"-std=c++17\"");
  if (missing.empty()) return;
  out->push_back({"build.cute_flags", cflags_line > 0 ? cflags_line : include_line,
                  "CuTe/CUTLASS headers need " + Join(missing, " and ") +
                      " in extra_cuda_cflags of load_inline"});
}

void CheckBarrierLifecycle(const std::vector<Line>& lines, std::vector<ConstraintViolation>* out,
                           const std::set<std::string>& enabled) {
  const int init_line = FirstLine(lines, BarrierInit());
  static const std::regex kUse(
      R"re(arrive_and_expect_tx|expect_transaction|mbarrier\.(try_wait|arrive)|)re"
      R"re((ClusterBarrier|ClusterTransactionBarrier)::(wait|arrive)|\bproducer_acquire\b|)re"
      R"re(\bconsumer_wait\b)re");
  const int use_line = FirstLine(lines, kUse);
  if (enabled.count("barrier.init_before_use") && init_line == 0 && use_line > 0) {
    out->push_back({"barrier.init_before_use", use_line,
                    "this waits on or arrives at an mbarrier that is never initialised: have one "
                    "thread call ClusterBarrier::init(&bar, arrival_count) (or "
                    "ClusterTransactionBarrier::init) for each barrier before any use"});
  }
  if (init_line > 0 && use_line > 0 && use_line < init_line &&
      enabled.count("barrier.init_before_use")) {
    out->push_back({"barrier.init_before_use", use_line,
                    "an mbarrier is used (line " + std::to_string(use_line) +
                        ") before the first barrier initialisation (line " +
                        std::to_string(init_line) + "): initialise barriers first"});
  }
  if (init_line == 0 || !enabled.count("barrier.fence_after_init")) return;
  static const std::regex kFence(
      R"re(fence_barrier_init|fence\.mbarrier_init|fence_view_async_shared)re");
  static const std::regex kSync(
      R"re(cluster_sync\s*\(|cluster_arrive|cluster_wait|barrier\.cluster|)re"
      R"re(__syncthreads\s*\(|cooperative_groups::this_cluster\(\)\.sync|cluster\.sync\s*\()re");
  if (FirstLine(lines, kFence, init_line) == 0) {
    out->push_back({"barrier.fence_after_init", init_line,
                    "after initialising the mbarriers call cutlass::arch::fence_barrier_init() so "
                    "the initialisation is visible to the async proxy (TMA) and other CTAs"});
  }
  if (FirstLine(lines, kSync, init_line) == 0) {
    out->push_back({"barrier.fence_after_init", init_line,
                    "after initialising the mbarriers synchronise the block (cute::cluster_sync() "
                    "with clusters, __syncthreads() without) before any thread uses them"});
  }
}

void CheckTma(const std::vector<Line>& lines, std::vector<ConstraintViolation>* out) {
  const int tma_line = FirstLine(lines, UsesTma());
  if (tma_line == 0) return;
  if (FirstLine(lines, BarrierInit()) == 0) {
    out->push_back({"tma.mbarrier", tma_line,
                    "TMA loads complete on an mbarrier: initialise a ClusterTransactionBarrier per "
                    "stage, call arrive_and_expect_tx(bytes) on it and pass it to the copy "
                    "(copy(tma.with(bar), ...)); none is initialised here"});
  }
  // A CUtensorMap (or CuTe's TMA copy) passed by value must be __grid_constant__.
  static const std::regex kKernelParam(R"re(__global__[^;{]*\b(const\s+)?CUtensorMap\b)re");
  static const std::regex kGridConstant(R"re(__grid_constant__|CUTE_GRID_CONSTANT)re");
  for (const Line& line : lines) {
    if (std::regex_search(line.text, kKernelParam) &&
        !std::regex_search(line.text, kGridConstant)) {
      out->push_back({"tma.mbarrier", line.number,
                      "pass TMA descriptors to the kernel as `const __grid_constant__ CUtensorMap` "
                      "(by value); a descriptor in ordinary parameter or global memory is not "
                      "usable by TMA"});
    }
  }
}

void CheckWarpgroupLaunch(const std::vector<Line>& lines, std::vector<ConstraintViolation>* out) {
  if (FirstLine(lines, UsesGmma()) == 0) return;
  static const std::regex kBounds(R"re(__launch_bounds__\s*\(\s*(\d+))re");
  for (const Line& line : lines) {
    std::smatch m;
    if (std::regex_search(line.text, m, kBounds)) {
      const int threads = std::stoi(m[1].str());
      if (threads % 128 != 0) {
        out->push_back({"warp_specialization.roles", line.number,
                        "__launch_bounds__(" + m[1].str() +
                            ") is not a whole number of warpgroups: warpgroup MMA and register "
                            "reallocation work per 128 threads, so use 128, 256 or 384"});
      }
    }
  }
  static const std::regex kDealloc(R"re(warpgroup_reg_dealloc|setmaxnreg\.dec)re");
  static const std::regex kAlloc(R"re(warpgroup_reg_alloc|setmaxnreg\.inc)re");
  const int dealloc = FirstLine(lines, kDealloc);
  const int alloc = FirstLine(lines, kAlloc);
  if ((dealloc > 0) != (alloc > 0)) {
    out->push_back({"warp_specialization.roles", std::max(dealloc, alloc),
                    "register reallocation comes in pairs: the producer warpgroup lowers its "
                    "registers (warpgroup_reg_dealloc<40>) and the consumers raise theirs "
                    "(warpgroup_reg_alloc<232>); only one side is here"});
  }
}

void CheckSmemAlignment(const std::vector<Line>& lines, std::vector<ConstraintViolation>* out) {
  static const std::regex kSwizzled(R"re(Swizzle<|_SW(32|64|128)_|SW128|make_tma_copy|SM90_TMA)re");
  if (FirstLine(lines, kSwizzled) == 0) return;
  static const std::regex kSw128(R"re(Swizzle<3,\s*4,\s*3>|_SW128_|SW128)re");
  const bool sw128 = FirstLine(lines, kSw128) > 0;
  static const std::regex kStaticShared(R"re(^(?!\s*extern\b)[^/]*__shared__[^;]*\[)re");
  static const std::regex kAligned(R"re(alignas\s*\(\s*(\d+)\s*\)|__align__\s*\(\s*(\d+)\s*\))re");
  for (const Line& line : lines) {
    if (!std::regex_search(line.text, kStaticShared)) continue;
    std::smatch m;
    if (!std::regex_search(line.text, m, kAligned)) {
      out->push_back({"smem.swizzle_alignment", line.number,
                      std::string("declare this shared-memory buffer alignas(") +
                          (sw128 ? "1024" : "128") +
                          "): swizzled GMMA/TMA layouts address it by its low bits"});
      continue;
    }
    const int bytes = std::stoi(m[1].matched ? m[1].str() : m[2].str());
    const int needed = sw128 ? 1024 : 128;
    if (bytes < needed) {
      out->push_back({"smem.swizzle_alignment", line.number,
                      "raise this buffer's alignment from " + std::to_string(bytes) + " to " +
                          std::to_string(needed) + " bytes (the " +
                          (sw128 ? "128-byte swizzle repeats every 1024 bytes"
                                 : "swizzle atoms are 128 bytes") +
                          ")"});
    }
  }
}

// Parses "_128" or "Int<128>" to 128; -1 for anything else.
int StaticExtent(const std::string& mode) {
  static const std::regex kUnderscore(R"re(^\s*_(\d+)(\{\})?\s*$)re");
  static const std::regex kInt(R"re(^\s*(cute::)?Int<\s*(\d+)\s*>(\{\})?\s*$)re");
  std::smatch m;
  if (std::regex_match(mode, m, kUnderscore)) return std::stoi(m[1].str());
  if (std::regex_match(mode, m, kInt)) return std::stoi(m[2].str());
  return -1;
}

void CheckTileDivisibility(const std::vector<Line>& lines, std::vector<ConstraintViolation>* out) {
  if (FirstLine(lines, UsesGmma()) == 0) return;
  static const std::regex kFp8(R"re(e4m3|e5m2|int8_t|uint8_t)re");
  const int k_atom = FirstLine(lines, kFp8) > 0 ? 32 : 16;
  // A three-mode Shape on a line that names a tile: the CTA tile (M, N, K).
  static const std::regex kTileLine(R"re([Tt]ile|MNK)re");
  static const std::regex kShape3(
      R"re(Shape<([^<>,]+(?:<[^<>]*>)?[^<>,]*),([^<>,]+(?:<[^<>]*>)?[^<>,]*),([^<>,)re"
      R"re(]+(?:<[^<>]*>)?[^<>,]*)>)re");
  for (const Line& line : lines) {
    if (!std::regex_search(line.text, kTileLine)) continue;
    std::smatch m;
    if (!std::regex_search(line.text, m, kShape3)) continue;
    const int tm = StaticExtent(m[1].str()), tn = StaticExtent(m[2].str()),
              tk = StaticExtent(m[3].str());
    if (tm < 0 || tn < 0 || tk < 0) continue;
    std::vector<std::string> problems;
    if (tm % 64 != 0) problems.push_back("M=" + std::to_string(tm) + " is not a multiple of 64");
    if (tn % 8 != 0) problems.push_back("N=" + std::to_string(tn) + " is not a multiple of 8");
    if (tk % k_atom != 0) {
      problems.push_back("K=" + std::to_string(tk) + " is not a multiple of " +
                         std::to_string(k_atom));
    }
    if (problems.empty()) continue;
    out->push_back({"gmma.tile_divisibility", line.number,
                    "make the CTA tile (" + std::to_string(tm) + "," + std::to_string(tn) + "," +
                        std::to_string(tk) + ") a multiple of the GMMA atom (64xNx" +
                        std::to_string(k_atom) + "): " + Join(problems, ", ")});
  }
}

}  // namespace

std::vector<Constraint> CuratedConstraints() {
  std::vector<Constraint> curated = {
      {"build.sm90a", "build",
       "Compile warpgroup-MMA (wgmma/GMMA) and setmaxnreg code for sm_90a "
       "(-gencode=arch=compute_90a,code=sm_90a), never plain sm_90, where those instructions do "
       "not exist.",
       "", ""},
      {"build.cute_flags", "build",
       "Compile CuTe/CUTLASS code with -std=c++17 and --expt-relaxed-constexpr in "
       "extra_cuda_cflags.",
       "", ""},
      {"gmma.tile_divisibility", "gmma",
       "Make the CTA tile a multiple of the GMMA atom: M a multiple of 64 per warpgroup, N a "
       "multiple of 8 up to 256, K a multiple of 16 for 16-bit inputs (32 for 8-bit), and the smem "
       "tile a multiple of the layout atom (check with check_smem_layout).",
       "", ""},
      {"barrier.init_before_use", "barrier",
       "Initialise every mbarrier once, from one thread (ClusterBarrier::init / "
       "ClusterTransactionBarrier::init with its arrival count), before any thread arrives on or "
       "waits for it.",
       "", ""},
      {"barrier.fence_after_init", "barrier",
       "After initialising mbarriers, call cutlass::arch::fence_barrier_init() and then "
       "cute::cluster_sync() (or __syncthreads() without clusters) before first use.",
       "", ""},
      {"tma.mbarrier", "tma",
       "Build TMA descriptors on the host (make_tma_copy), pass them as const __grid_constant__ "
       "parameters, and complete every TMA load on a transaction mbarrier armed with "
       "arrive_and_expect_tx(bytes of all copies of the stage).",
       "", ""},
      {"smem.swizzle_alignment", "smem",
       "Align shared-memory buffers of swizzled layouts to 2^(B+M+S) bytes of their "
       "Swizzle<B,M,S>: 1024 for the 128-byte swizzle, at least 128 otherwise (alignas).",
       "", ""},
      {"warp_specialization.roles", "warp_specialization",
       "In a warp-specialised kernel launch whole warpgroups (128 threads each), let one producer "
       "warpgroup issue TMA after warpgroup_reg_dealloc<40>() and the consumer warpgroups run "
       "GMMA after warpgroup_reg_alloc<232>().",
       "", ""},
      {"gmma.fences", "gmma",
       "Around GMMA: warpgroup_fence_operand(accum), warpgroup_arrive() before the MMAs, "
       "warpgroup_commit_batch() after, and warpgroup_wait<N>() before reading the accumulators "
       "or releasing the smem stage to the producer.",
       "", ""},
      {"smem.capacity", "smem",
       "Keep a block's shared memory within 227 KiB and, above 48 KiB, opt in with "
       "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes).",
       "", ""},
      {"tma.global_alignment", "tma",
       "Give TMA's global tensors a 16-byte-aligned base and strides that are multiples of 16 "
       "bytes (all but the contiguous one).",
       "", ""},
  };
  for (Constraint& c : EpilogueConstraints()) curated.push_back(std::move(c));
  return curated;
}

Result<std::vector<Constraint>> MineConstraints(const std::string& include_dir) {
  if (!fs::exists(fs::path(include_dir) / "cute/tensor.hpp")) {
    return Status::NotFound("no CuTe headers under '" + include_dir + "'");
  }
  static const std::regex kAssert(
      R"re(\b(static_assert|CUTE_STATIC_ASSERT_V|CUTE_STATIC_ASSERT)\s*\()re");
  std::vector<Constraint> mined;
  std::set<std::string> seen_messages;
  for (const MinedSource& source : kMinedSources) {
    for (const std::string& relative : SourceFiles(include_dir, source)) {
      auto text = ReadFileText((fs::path(include_dir) / relative).string());
      if (!text.ok()) continue;
      const std::string code = BlankComments(*text);
      for (auto it = std::sregex_iterator(code.begin(), code.end(), kAssert);
           it != std::sregex_iterator(); ++it) {
        const std::size_t open = it->position(0) + it->length(0) - 1;
        std::size_t end = 0;
        const std::vector<std::string> args = CallArguments(code, open, &end);
        if (args.size() < 2) continue;  // no message: nothing a model could act on
        const std::string message = StringLiteralValue(args.back());
        if (message.empty() || !seen_messages.insert(message).second) continue;
        std::vector<std::string> condition_parts(args.begin(), args.end() - 1);
        const int line =
            1 + static_cast<int>(std::count(code.begin(), code.begin() + it->position(0), '\n'));
        Constraint c;
        c.id = "mined." + Stem(relative) + "." + std::to_string(line);
        c.category = source.category;
        c.text = "Satisfy CUTLASS's check: " + message + (message.back() == '.' ? "" : ".");
        c.source = relative + ":" + std::to_string(line);
        c.condition = OneLineExcerpt(Join(condition_parts, ","), kMaxConditionBytes);
        mined.push_back(std::move(c));
      }
    }
  }
  return mined;
}

Result<std::vector<Constraint>> AllConstraints(const std::string& include_dir) {
  auto mined = MineConstraints(include_dir);
  if (!mined.ok()) return mined.status();
  std::vector<Constraint> all = CuratedConstraints();
  all.insert(all.end(), mined->begin(), mined->end());
  return all;
}

Json ConstraintsToJson(const std::vector<Constraint>& constraints) {
  Json list = Json::array();
  for (const Constraint& c : constraints) {
    Json item{{"id", c.id}, {"category", c.category}, {"text", c.text}};
    if (!c.source.empty()) item["source"] = c.source;
    if (!c.condition.empty()) item["condition"] = c.condition;
    list.push_back(std::move(item));
  }
  return Json{{"constraints", list}};
}

Result<std::vector<Constraint>> ConstraintsFromJson(const Json& json) {
  if (!json.is_object() || !json.contains("constraints") || !json["constraints"].is_array()) {
    return Status::InvalidArgument("a constraints file is an object with a \"constraints\" list");
  }
  std::vector<Constraint> out;
  for (const Json& item : json["constraints"]) {
    Constraint c;
    c.id = JsonGet<std::string>(item, "id", "");
    c.category = JsonGet<std::string>(item, "category", "");
    c.text = JsonGet<std::string>(item, "text", "");
    c.source = JsonGet<std::string>(item, "source", "");
    c.condition = JsonGet<std::string>(item, "condition", "");
    if (c.id.empty() || c.text.empty()) {
      return Status::InvalidArgument("a constraint without an id or text");
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string RenderConstraintsMarkdown(const std::vector<Constraint>& constraints,
                                      std::size_t max_bytes) {
  std::string out =
      "# Non-negotiable constraints for CUTLASS/CuTe code on Hopper\n\n"
      "Break one and the build fails (a static_assert) or the kernel hangs or is wrong.\n\n";
  std::size_t shown = 0;
  for (const Constraint& c : constraints) {
    std::string bullet = "- " + c.text;
    if (!c.condition.empty()) bullet += " (`" + c.condition + "`";
    if (!c.source.empty())
      bullet += (c.condition.empty() ? " (" : ", ") + c.source + ")";
    else if (!c.condition.empty())
      bullet += ")";
    bullet += "\n";
    // Room for the closing line.
    if (out.size() + bullet.size() + 80 > max_bytes) break;
    out += bullet;
    ++shown;
  }
  if (shown < constraints.size()) {
    out += "- ... and " + std::to_string(constraints.size() - shown) +
           " more CUTLASS asserts in the constraints file.\n";
  }
  return out;
}

Status WriteConstraintsFiles(const std::string& path_without_extension,
                             const std::vector<Constraint>& constraints,
                             std::size_t markdown_bytes) {
  if (Status s = WriteJsonFile(path_without_extension + ".json", ConstraintsToJson(constraints));
      !s.ok()) {
    return s;
  }
  return WriteFileAtomically(path_without_extension + ".md",
                             RenderConstraintsMarkdown(constraints, markdown_bytes));
}

std::vector<ConstraintViolation> ValidateCandidate(const std::string& source,
                                                   const std::vector<Constraint>& constraints,
                                                   const ValidatorOptions& options) {
  std::set<std::string> enabled;
  for (const Constraint& c : constraints) enabled.insert(c.id);
  // Comments are not code: a commented-out sm_90 or __shared__ must not count.
  const std::vector<Line> lines = NumberedLines(BlankCandidateComments(source));
  std::vector<ConstraintViolation> out;
  if (enabled.count("build.sm90a")) CheckArchitecture(lines, options, &out);
  if (enabled.count("build.cute_flags")) CheckCuteFlags(lines, options, &out);
  if (enabled.count("gmma.tile_divisibility")) CheckTileDivisibility(lines, &out);
  CheckBarrierLifecycle(lines, &out, enabled);
  if (enabled.count("tma.mbarrier")) CheckTma(lines, &out);
  if (enabled.count("smem.swizzle_alignment")) CheckSmemAlignment(lines, &out);
  if (enabled.count("warp_specialization.roles")) CheckWarpgroupLaunch(lines, &out);
  std::vector<std::string> texts;
  for (const Line& line : lines) texts.push_back(line.text);
  CheckEpilogue(texts, enabled, &out);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

std::string RenderViolations(const std::vector<ConstraintViolation>& violations) {
  std::string out;
  for (const ConstraintViolation& v : violations) {
    out += (v.line > 0 ? "line " + std::to_string(v.line) + " " : std::string()) + "[" +
           v.constraint_id + "] " + v.message + "\n";
  }
  return out;
}

}  // namespace kernelpro::cutlass
