#include "profile/sass.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/subprocess.h"
#include "core/text.h"
#include "core/tool_paths.h"

namespace kernelpro::profile {
namespace {

constexpr auto kToolTimeout = std::chrono::seconds(120);
// A candidate's dump is a few hundred KiB; 64 MiB leaves room for large template-heavy builds
// while bounding memory when pointed at something like libtorch_cuda.so.
constexpr std::size_t kDumpCaptureBytes = 64 << 20;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsAlnum(char c) { return IsDigit(c) || IsUpper(c) || (c >= 'a' && c <= 'z'); }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The text up to the first blank, leading blanks skipped.
std::string_view FirstToken(std::string_view s) {
  s = TrimLeft(s);
  std::size_t end = 0;
  while (end < s.size() && !IsAsciiSpace(s[end])) ++end;
  return s.substr(0, end);
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> tokens;
  for (s = TrimLeft(s); !s.empty(); s = TrimLeft(s)) {
    std::string_view token = FirstToken(s);
    tokens.push_back(token);
    s.remove_prefix(token.size());
  }
  return tokens;
}

// Splits text into lines without copying; a trailing '\r' (a file saved with CRLF) is dropped.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : rest_(text) {}
  bool Next(std::string_view& line) {
    if (done_) return false;
    std::size_t end = rest_.find('\n');
    if (end == std::string_view::npos) {
      line = rest_;
      done_ = true;
    } else {
      line = rest_.substr(0, end);
      rest_.remove_prefix(end + 1);
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }

 private:
  std::string_view rest_;
  bool done_ = false;
};

// Orders architectures so that the newest compares greatest: "sm_90a" -> (90, "a"). Text that is
// not an sm_ name ranks below every real one.
std::tuple<int, std::string_view> ArchRank(std::string_view arch) {
  if (!arch.starts_with("sm_")) return {-1, arch};
  std::string_view digits = arch.substr(3);
  int number = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (error != std::errc() || number < 0) return {-1, arch};
  return {number, std::string_view(end, digits.data() + digits.size() - end)};
}

std::string NewestArch(const std::set<std::string>& archs) {
  std::string newest;
  for (const std::string& arch : archs) {
    if (!arch.empty() && (newest.empty() || ArchRank(arch) > ArchRank(newest))) newest = arch;
  }
  return newest;
}

std::string JoinArchs(const std::set<std::string>& archs) {
  std::string joined;
  for (const std::string& arch : archs) {
    if (arch.empty()) continue;
    if (!joined.empty()) joined += ", ";
    joined += arch;
  }
  return joined.empty() ? "none named" : joined;
}

// Tracks which fatbin section a line of cuobjdump output belongs to. Every cuobjdump listing
// (--dump-sass, -res-usage, -symbols) repeats the same section headers; only ELF sections carry
// machine code, and their "arch = " line names the architecture. "code for sm_XX" (the dump of a
// bare cubin has no fatbin header) names it too.
class FatbinSections {
 public:
  // Returns true when the line was a section header line (and consumed).
  bool Consume(std::string_view trimmed) {
    if (trimmed == "Fatbin elf code:") {
      in_elf_ = true;
      arch_.clear();
      return true;
    }
    if (trimmed.starts_with("Fatbin ") && trimmed.ends_with(" code:")) {
      in_elf_ = false;  // ptx (or some future kind of) section: no SASS in it
      arch_.clear();
      return true;
    }
    if (in_elf_ && trimmed.starts_with("arch = ")) {
      arch_ = std::string(FirstToken(trimmed.substr(7)));
      return true;
    }
    if (trimmed.starts_with("code for ")) {
      std::string_view arch = FirstToken(trimmed.substr(9));
      if (!arch.empty()) arch_ = std::string(arch);
      return true;
    }
    return false;
  }
  bool in_elf() const { return in_elf_; }
  const std::string& arch() const { return arch_; }

 private:
  bool in_elf_ = true;  // a bare cubin dump starts without any header
  std::string arch_;
};

// `/*0070*/  @P0 EXIT ;  /* 0x... */` -> "EXIT". Empty when the line is not a complete instruction:
// the address comment must be hex and the ';' present, so a line cut short is not half-counted.
std::string_view InstructionMnemonic(std::string_view line) {
  line = TrimLeft(line);
  if (!line.starts_with("/*")) return {};
  std::size_t close = line.find("*/", 2);
  if (close == std::string_view::npos || close == 2) return {};
  for (std::size_t i = 2; i < close; ++i) {
    if (!IsHexDigit(line[i])) return {};  // the encoding lines are `/* 0x... */`, with a blank
  }
  std::string_view body = line.substr(close + 2);
  std::size_t semicolon = body.find(';');
  if (semicolon == std::string_view::npos) return {};
  body = TrimLeft(body.substr(0, semicolon));
  if (body.starts_with('{')) body = TrimLeft(body.substr(1));  // Kepler-era dual-issue braces
  if (body.starts_with('@')) body.remove_prefix(FirstToken(body).size());  // @P0, @!PT, @UP1
  std::string_view mnemonic = FirstToken(body);
  if (mnemonic.empty() || !IsUpper(mnemonic.front())) return {};
  for (char c : mnemonic) {
    if (!IsAlnum(c) && c != '.' && c != '_') return {};
  }
  return mnemonic;
}

std::vector<std::string_view> SplitDots(std::string_view mnemonic) {
  std::vector<std::string_view> parts;
  while (true) {
    std::size_t dot = mnemonic.find('.');
    parts.push_back(mnemonic.substr(0, dot));
    if (dot == std::string_view::npos) return parts;
    mnemonic.remove_prefix(dot + 1);
  }
}

bool IsAllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

// Width bucket of an LDG / STG from its modifiers: "128", "64", "32", "narrow", or another bit
// count such as "256". No width modifier means 32 bits.
std::string AccessWidth(const std::vector<std::string_view>& parts) {
  for (std::size_t i = 1; i < parts.size(); ++i) {
    std::string_view mod = parts[i];
    if (IsAllDigits(mod)) return std::string(mod);
    if (mod == "U8" || mod == "S8" || mod == "U16" || mod == "S16") return "narrow";
  }
  return "32";
}

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

// Base opcode -> category, for every category decided by the base alone (see sass.h).
const std::map<std::string_view, std::string_view>& CategoryByBase() {
  // One line per group of related opcodes reads better than clang-format's one per entry.
  // clang-format off
  static const auto* kTable = new std::map<std::string_view, std::string_view>{
      {"HGMMA", "tensor_wgmma"}, {"IGMMA", "tensor_wgmma"}, {"QGMMA", "tensor_wgmma"},
      {"BGMMA", "tensor_wgmma"}, {"HMMA", "tensor_hmma"}, {"IMMA", "tensor_imma"},
      {"DMMA", "tensor_dmma"}, {"BMMA", "tensor_bmma"},
      {"LDGSTS", "ldgsts"},
      {"LDGDEPBAR", "async_barrier"}, {"DEPBAR", "async_barrier"},
      {"UTMACMDFLUSH", "async_barrier"},
      {"UTMALDG", "tma"}, {"UTMASTG", "tma"}, {"UTMAPF", "tma"}, {"UTMAREDG", "tma"},
      {"UBLKCP", "tma"}, {"UBLKPF", "tma"}, {"UBLKRED", "tma"},
      {"SYNCS", "mbarrier"}, {"WARPGROUP", "warpgroup_sync"},
      {"LDL", "local_load"}, {"STL", "local_store"},
      {"FFMA", "ffma"}, {"FFMA32I", "ffma"}, {"FADD", "fadd"}, {"FADD32I", "fadd"},
      {"FMUL", "fmul"}, {"FMUL32I", "fmul"},
      {"BAR", "barrier"}, {"WARPSYNC", "warp_sync"}, {"SHFL", "shuffle"},
      {"LDS", "shared_load"}, {"STS", "shared_store"},
      {"LDSM", "shared_load_matrix"}, {"STSM", "shared_store_matrix"},
      {"LD", "generic_load"}, {"ST", "generic_store"},
      {"ATOMG", "atomic"}, {"ATOM", "atomic"}, {"RED", "atomic"}, {"REDG", "atomic"},
      {"ATOMS", "atomic_shared"}};
  // clang-format on
  return *kTable;
}

// Adds `count` static instructions with this full mnemonic to the categories documented in sass.h.
void Categorize(std::string_view mnemonic, std::int64_t count,
                std::map<std::string, std::int64_t>& categories) {
  std::vector<std::string_view> parts = SplitDots(mnemonic);
  std::string_view base = parts[0];
  if (base == "MUFU") {
    categories["mufu"] += count;
    if (parts.size() > 1 && !parts[1].empty()) categories["mufu_" + Lower(parts[1])] += count;
    return;
  }
  if (base == "LDG" || base == "STG") {
    std::string kind = base == "LDG" ? "global_load" : "global_store";
    categories[kind] += count;
    categories[kind + "_" + AccessWidth(parts)] += count;
    return;
  }
  auto it = CategoryByBase().find(base);
  if (it != CategoryByBase().end()) categories[std::string(it->second)] += count;
}

// One "Function :" block of a dump, before its histogram is summarised.
struct DumpedFunction {
  std::string arch;
  std::string name;
  std::map<std::string, std::int64_t, std::less<>> mnemonics;  // full mnemonic -> count
};

SassKernel Summarise(const DumpedFunction& function) {
  SassKernel kernel;
  kernel.name = function.name;
  for (const std::string& category : SassCategoryNames()) kernel.categories[category] = 0;
  for (const auto& [mnemonic, count] : function.mnemonics) {
    std::string base = mnemonic.substr(0, mnemonic.find('.'));
    if (base == "NOP") continue;  // alignment padding, not work
    kernel.opcodes[base] += count;
    kernel.total_instructions += count;
    Categorize(mnemonic, count, kernel.categories);
  }
  return kernel;
}

// Reads "KEY:VALUE" as a non-negative number; false when it is not one.
bool ParseCount(std::string_view value, std::int64_t& out) {
  if (!IsAllDigits(value)) return false;
  std::int64_t parsed = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size()) return false;
  out = parsed;
  return true;
}

struct ResourceRow {
  std::string arch;
  std::string name;
  int registers = -1;
  std::int64_t shared_bytes = -1, local_bytes = -1, stack_bytes = -1;
};

bool StartsWithWord(std::string_view s, std::string_view word) {
  return s.starts_with(word) && (s.size() == word.size() || IsAsciiSpace(s[word.size()]));
}

// The output of cuobjdump or nm, or why there is none. `no_device_code` is set (and the text empty)
// when cuobjdump says the file has no device code, which is a normal state for a host-only
// extension.
struct CommandOutput {
  std::string text;
  bool no_device_code = false;
};

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv) {
  ProcessOptions options;
  options.argv = argv;
  options.limits.wall_timeout = kToolTimeout;
  options.capture_bytes = kDumpCaptureBytes;
  const std::string what = Join(argv, " ");
  Result<ProcessResult> run = RunProcess(options);
  if (!run.ok()) return run.status();
  ProcessResult& p = *run;
  if (!p.started) return Status::Unavailable(what + ": cannot start: " + p.start_error);
  if (p.timed_out) return Status::Timeout(what + ": " + p.Describe());
  if (p.exited && p.exit_code != 0 &&
      p.stderr_text.find("does not contain device code") != std::string::npos) {
    return CommandOutput{"", true};
  }
  if (!p.exited || p.exit_code != 0) {
    std::string detail(Trim(p.stderr_text));
    if (detail.size() > 2000) detail = "..." + detail.substr(detail.size() - 2000);
    return Status::IoError(what + ": " + p.Describe() + (detail.empty() ? "" : ": " + detail));
  }
  if (p.stdout_bytes > kDumpCaptureBytes) {
    return Status::IoError(what + ": printed " + std::to_string(p.stdout_bytes) +
                           " bytes, more than the " + std::to_string(kDumpCaptureBytes >> 20) +
                           " MiB kernelpro reads; histograms from a cut listing would be wrong");
  }
  return CommandOutput{std::move(p.stdout_text), false};
}

}  // namespace

const std::vector<std::string>& SassCategoryNames() {
  // clang-format off
  static const std::vector<std::string> kNames = {
      "tensor_wgmma", "tensor_hmma", "tensor_imma", "tensor_dmma", "tensor_bmma",
      "ldgsts", "async_barrier", "tma", "mbarrier", "warpgroup_sync",
      "local_load", "local_store", "mufu", "ffma", "fadd", "fmul",
      "barrier", "warp_sync", "shuffle",
      "global_load", "global_load_128", "global_load_64", "global_load_32", "global_load_narrow",
      "global_store", "global_store_128", "global_store_64", "global_store_32",
      "global_store_narrow",
      "shared_load", "shared_store", "shared_load_matrix", "shared_store_matrix",
      "generic_load", "generic_store", "atomic", "atomic_shared"};
  // clang-format on
  return kNames;
}

Result<SassView> ParseSassDump(std::string_view text, std::string_view arch) {
  std::vector<DumpedFunction> functions;
  std::set<std::string> section_archs;
  FatbinSections sections;
  bool looks_like_sass = false;
  int current = -1;  // index into `functions` of the block being read

  LineReader lines(text);
  for (std::string_view line; lines.Next(line);) {
    std::string_view trimmed = Trim(line);
    if (sections.Consume(trimmed)) {
      current = -1;  // a header ends the function before it
      if (!sections.arch().empty()) section_archs.insert(sections.arch());
      looks_like_sass = true;
      continue;
    }
    if (trimmed.starts_with("Function")) {
      std::string_view rest = TrimLeft(trimmed.substr(8));
      if (rest.starts_with(':')) {
        looks_like_sass = true;
        current = -1;
        std::string_view name = FirstToken(rest.substr(1));
        if (sections.in_elf() && !name.empty()) {
          functions.push_back(DumpedFunction{sections.arch(), std::string(name), {}});
          current = static_cast<int>(functions.size()) - 1;
        }
        continue;
      }
    }
    if (current < 0) continue;
    std::string_view mnemonic = InstructionMnemonic(line);
    if (mnemonic.empty()) continue;
    auto& mnemonics = functions[current].mnemonics;
    auto it = mnemonics.find(mnemonic);
    if (it == mnemonics.end()) {
      mnemonics.emplace(std::string(mnemonic), 1);
    } else {
      ++it->second;
    }
  }
  if (!looks_like_sass) {
    return Status::InvalidArgument(
        "no SASS found: expected `cuobjdump --dump-sass` output with 'Function :' blocks");
  }

  std::set<std::string> function_archs;
  for (const DumpedFunction& f : functions) function_archs.insert(f.arch);
  SassView view;
  if (!arch.empty()) {
    if (!function_archs.contains(std::string(arch)) && !section_archs.contains(std::string(arch))) {
      std::set<std::string> all = function_archs;
      all.insert(section_archs.begin(), section_archs.end());
      return Status::InvalidArgument("the dump has no code for " + std::string(arch) + " (it has " +
                                     JoinArchs(all) + ")");
    }
    view.arch = std::string(arch);
  } else {
    view.arch = NewestArch(function_archs);
    if (view.arch.empty()) view.arch = NewestArch(section_archs);
  }
  for (const DumpedFunction& f : functions) {
    // A function before any architecture was named (a dump missing its head) is kept: it can
    // only belong to the one architecture there is.
    if (f.arch.empty() || f.arch == view.arch) view.kernels.push_back(Summarise(f));
  }
  return view;
}

void ApplyResourceUsage(std::string_view text, SassView& view) {
  std::vector<ResourceRow> rows;
  FatbinSections sections;
  std::string pending_name;  // the last "Function NAME:" line, waiting for its numbers
  LineReader lines(text);
  for (std::string_view line; lines.Next(line);) {
    std::string_view trimmed = Trim(line);
    if (sections.Consume(trimmed)) {
      pending_name.clear();
      continue;
    }
    if (StartsWithWord(trimmed, "Function")) {
      std::string_view name = Trim(trimmed.substr(8));
      if (name.starts_with(':')) name = Trim(name.substr(1));  // the --dump-sass spelling
      if (name.ends_with(':')) name.remove_suffix(1);
      pending_name = std::string(FirstToken(name));
      continue;
    }
    if (!trimmed.starts_with("REG:") || pending_name.empty() || !sections.in_elf()) continue;
    ResourceRow row;
    row.arch = sections.arch();
    row.name = std::move(pending_name);
    pending_name.clear();
    for (std::string_view token : Tokens(trimmed)) {
      std::size_t colon = token.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view key = token.substr(0, colon);
      std::int64_t value = 0;
      if (!ParseCount(token.substr(colon + 1), value)) continue;
      if (key == "REG" && value <= INT_MAX) row.registers = static_cast<int>(value);
      if (key == "STACK") row.stack_bytes = value;
      if (key == "SHARED") row.shared_bytes = value;
      if (key == "LOCAL") row.local_bytes = value;
    }
    rows.push_back(std::move(row));
  }

  if (view.arch.empty()) {
    std::set<std::string> archs;
    for (const ResourceRow& row : rows) archs.insert(row.arch);
    view.arch = NewestArch(archs);
  }
  // The n-th row of a name goes to the n-th kernel of that name: two translation units may each
  // define a file-local kernel with the same mangled name, listed in the same order by both tools.
  std::map<std::string, int> seen;
  for (ResourceRow& row : rows) {
    if (!row.arch.empty() && !view.arch.empty() && row.arch != view.arch) continue;
    int wanted = seen[row.name]++;
    SassKernel* target = nullptr;
    for (SassKernel& kernel : view.kernels) {
      if (kernel.name == row.name && wanted-- == 0) {
        target = &kernel;
        break;
      }
    }
    if (target == nullptr) {
      view.kernels.emplace_back();
      target = &view.kernels.back();
      target->name = row.name;
    }
    target->registers = row.registers;
    target->shared_bytes = row.shared_bytes;
    target->local_bytes = row.local_bytes;
    target->stack_bytes = row.stack_bytes;
  }
}

std::vector<std::string> ParseEntryPoints(std::string_view text) {
  std::vector<std::string> entries;
  std::set<std::string, std::less<>> seen;
  LineReader lines(text);
  for (std::string_view line; lines.Next(line);) {
    std::vector<std::string_view> tokens = Tokens(line);
    if (tokens.size() < 4) continue;
    bool is_function = false, is_global = false, is_entry = false;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      is_function |= tokens[i] == "STT_FUNC" || tokens[i] == "FUNC";
      is_global |= tokens[i] == "STB_GLOBAL" || tokens[i] == "GLOBAL";
      is_entry |= tokens[i] == "STO_ENTRY" || tokens[i] == "ENTRY";
    }
    std::string_view name = tokens.back();
    if (!is_function || !is_global || !is_entry ||
        IsOneOf(name, {"STO_ENTRY", "ENTRY", "STB_GLOBAL", "GLOBAL", "STT_FUNC", "FUNC"})) {
      continue;
    }
    if (seen.insert(std::string(name)).second) entries.emplace_back(name);
  }
  return entries;
}

std::vector<std::string> ParseLibraryCalls(std::string_view text) {
  std::set<std::string> calls;
  LineReader lines(text);
  for (std::string_view line; lines.Next(line);) {
    // "<address> T name" for a defined symbol, "U name" (after blanks) for an undefined one.
    std::vector<std::string_view> tokens = Tokens(line);
    if (tokens.size() != 2 && tokens.size() != 3) continue;
    std::string_view type = tokens[tokens.size() - 2];
    if (type.size() != 1 || !IsAlnum(type[0])) continue;
    if (tokens.size() == 3 && !std::all_of(tokens[0].begin(), tokens[0].end(), IsHexDigit))
      continue;
    std::string_view name = tokens.back();
    name = name.substr(0, name.find('@'));  // cublasGemmEx@libcublas.so.13
    if (name.starts_with("cublas") || name.starts_with("cudnn")) calls.emplace(name);
  }
  return {calls.begin(), calls.end()};
}

SassView CombineSass(std::string_view dump, std::string_view res_usage, std::string_view symbols,
                     std::string_view nm, std::string_view arch) {
  SassView view;
  Result<SassView> parsed = ParseSassDump(dump, arch);
  if (parsed.ok()) {
    view = std::move(*parsed);
  } else {
    view.arch = std::string(arch);
  }
  ApplyResourceUsage(res_usage, view);
  view.entry_points = ParseEntryPoints(symbols);
  view.library_calls = ParseLibraryCalls(nm);
  std::set<std::string, std::less<>> entries(view.entry_points.begin(), view.entry_points.end());
  std::stable_partition(view.kernels.begin(), view.kernels.end(),
                        [&](const SassKernel& k) { return entries.contains(k.name); });
  return view;
}

Result<SharedObjectDump> DumpSharedObject(const std::string& so_path) {
  std::string cuobjdump = FindTool("cuobjdump");
  if (cuobjdump.empty()) {
    return Status::Unavailable(
        "cuobjdump not found: run scripts/setup (it installs NVIDIA's cuobjdump under "
        ".tools/pypi) or set KERNELPRO_CUOBJDUMP to its path");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(so_path, ec)) {
    return Status::NotFound("no such file: " + so_path);
  }
  Result<CommandOutput> dump = RunCommand({cuobjdump, "--dump-sass", so_path});
  if (!dump.ok()) return dump.status();
  SharedObjectDump out;
  out.no_device_code = dump->no_device_code;
  out.sass = std::move(dump->text);
  if (!out.no_device_code) {
    Result<CommandOutput> res = RunCommand({cuobjdump, "-res-usage", so_path});
    if (!res.ok()) return res.status();
    Result<CommandOutput> sym = RunCommand({cuobjdump, "-symbols", so_path});
    if (!sym.ok()) return sym.status();
    out.res_usage = std::move(res->text);
    out.symbols = std::move(sym->text);
  }
  if (std::string nm = FindTool("nm"); !nm.empty()) {
    // A library call is extra information; a .so without a dynamic symbol table is not an error.
    Result<CommandOutput> nm_out = RunCommand({nm, "-D", so_path});
    if (nm_out.ok()) out.nm = std::move(nm_out->text);
  }
  return out;
}

Result<SassView> AnalyzeSharedObject(const std::string& so_path, std::string_view arch) {
  Result<SharedObjectDump> dump = DumpSharedObject(so_path);
  if (!dump.ok()) return dump.status();
  if (!arch.empty() && !dump->no_device_code) {
    // CombineSass forgives a dump without that architecture; a caller who named one wants to know.
    Result<SassView> check = ParseSassDump(dump->sass, arch);
    if (!check.ok()) return check.status();
  }
  return CombineSass(dump->sass, dump->res_usage, dump->symbols, dump->nm, arch);
}

}  // namespace kernelpro::profile
