#include "cutlass/smem_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "core/hash.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "core/tool_paths.h"

namespace kernelpro::cutlass {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxExpressionBytes = 400;
constexpr std::size_t kMaxMessageBytes = 300;
constexpr char kProbeFileName[] = "kp_smem_probe.cu";
// Bumped when the probe's text or the diagnosis changes, so old cache entries are not reused.
constexpr char kProbeVersion[] = "smem-probe-1";

// The lines the pasted fields sit on in SmemProbeSource (1-based), so that an error there is
// reported against the field the model wrote.
constexpr int kElementLine = 8;
constexpr int kAtomLine = 9;
constexpr int kTileLine = 10;

// Hopper's largest dynamic shared memory per block (227 KiB); a bigger layout cannot be allocated.
constexpr std::int64_t kHopperMaxSmemBytes = 227 * 1024;

bool IsAllowedChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '<' ||
         c == '>' || c == '(' || c == ')' || c == '{' || c == '}' || c == ',' || c == ' ' ||
         c == '\t' || c == '\n';
}

std::string CharName(char c) {
  switch (c) {
    case ';':
      return "';' (no statements)";
    case '#':
      return "'#' (no preprocessor)";
    case '"':
    case '\'':
      return "quotes (no strings or characters)";
    case '/':
      return "'/' (no comments or division)";
    case '\\':
      return "a backslash";
    default:
      break;
  }
  if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
  return "a control or non-ASCII byte";
}

// A type is pasted as it is; an expression goes inside decltype, so it is never evaluated.
bool LooksLikeExpression(std::string_view text) {
  text = Trim(text);
  return !text.empty() && (text.back() == ')' || text.back() == '}');
}

std::string AsTypeDeclaration(const std::string& text) {
  const std::string trimmed(Trim(text));
  return LooksLikeExpression(trimmed) ? "decltype(" + trimmed + ")" : trimmed;
}

// "KpExtents<100, 64>" -> "(100,64)".
std::string ExtentsTuple(const std::string& list) {
  std::string out = "(";
  for (const std::string& part : Split(list, ',')) {
    if (out.size() > 1) out += ",";
    out += std::string(Trim(part));
  }
  return out + ")";
}

std::string FieldForLine(int line) {
  if (line == kElementLine) return "the element type";
  if (line == kAtomLine) return "the atom expression";
  if (line == kTileLine) return "the tile shape";
  return "tile_to_shape(atom, tile shape)";
}

// Extra words for the mistakes models make most.
std::string HintFor(const std::string& message) {
  static const std::regex kUnderscoreConstant(R"re(identifier "_(\d+)" is undefined)re");
  std::smatch m;
  if (std::regex_search(message, m, kUnderscoreConstant)) {
    return "; CuTe names only some constants (_0.._10, multiples of 8 up to _256, powers of two): "
           "write Int<" +
           m[1].str() + "> instead";
  }
  if (Contains(message, "is undefined") || Contains(message, "is not a template")) {
    return "; check the name's namespace (cute::, cute::GMMA::, cutlass::) and spelling";
  }
  return "";
}

struct CompilerError {
  std::string file;
  int line = 0;
  std::string message;
  std::vector<std::string> context;  // the lines under it, up to the next error
};

std::vector<CompilerError> ParseErrors(const std::string& output) {
  static const std::regex kError(R"re(^(.*)\((\d+)\): (?:catastrophic )?error: (.*)$)re");
  static const std::regex kGccError(R"re(^([^:\s]+):(\d+):(?:\d+:)? (?:fatal )?error: (.*)$)re");
  std::vector<CompilerError> errors;
  for (const std::string& raw : SplitLines(output)) {
    std::smatch m;
    if (std::regex_match(raw, m, kError) || std::regex_match(raw, m, kGccError)) {
      errors.push_back({m[1].str(), std::atoi(m[2].str().c_str()), m[3].str(), {}});
    } else if (!errors.empty() && errors.back().context.size() < 40) {
      errors.back().context.push_back(raw);
    }
  }
  return errors;
}

std::string RelativeTo(const std::string& path, const std::string& include_dir) {
  if (include_dir.empty()) return path;
  std::string prefix = include_dir;
  if (prefix.back() != '/') prefix += '/';
  if (path.rfind(prefix, 0) == 0) return path.substr(prefix.size());
  return path;
}

std::string VersionText(const std::string& include_dir) {
  auto text = ReadFileText(include_dir + "/cutlass/version.h");
  return text.ok() ? *text : "";
}

std::string SmemBytes(std::int64_t bytes) {
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Json SmemLayoutDiagnosis::ToJson() const {
  return Json{{"compiles", compiles},      {"summary", summary},
              {"layout", layout},          {"size", size},
              {"cosize", cosize},          {"smem_bytes", smem_bytes},
              {"first_error", first_error}};
}

SmemLayoutDiagnosis SmemLayoutDiagnosis::FromJson(const Json& json) {
  SmemLayoutDiagnosis d;
  d.compiles = JsonGet<bool>(json, "compiles", false);
  d.summary = JsonGet<std::string>(json, "summary", "");
  d.layout = JsonGet<std::string>(json, "layout", "");
  d.size = JsonGet<std::int64_t>(json, "size", 0);
  d.cosize = JsonGet<std::int64_t>(json, "cosize", 0);
  d.smem_bytes = JsonGet<std::int64_t>(json, "smem_bytes", 0);
  d.first_error = JsonGet<std::string>(json, "first_error", "");
  return d;
}

Status CheckProbeExpression(const std::string& expression, const std::string& what) {
  const std::string_view text = Trim(expression);
  if (text.empty()) return Status::InvalidArgument(what + " is empty");
  if (text.size() > kMaxExpressionBytes) {
    return Status::InvalidArgument(what + " is longer than " + std::to_string(kMaxExpressionBytes) +
                                   " characters");
  }
  const std::string allowed =
      "; only identifiers, digits, '::', '<>', '()', empty '{}', commas and spaces are allowed";
  int parens = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!IsAllowedChar(c)) {
      return Status::InvalidArgument(what + " contains " + CharName(c) + allowed);
    }
    if (c == ':') {
      // Only the scope operator: a lone ':' could start a label or a bit-field.
      const bool pair =
          (i + 1 < text.size() && text[i + 1] == ':') || (i > 0 && text[i - 1] == ':');
      const bool triple = i + 2 < text.size() && text[i + 1] == ':' && text[i + 2] == ':';
      if (!pair || triple)
        return Status::InvalidArgument(what + " has a ':' that is not '::'" + allowed);
    } else if (c == '{') {
      // Only value-initialisation `T{}`: a non-empty brace could close the probe's declaration.
      std::size_t j = i + 1;
      while (j < text.size() && IsAsciiSpace(text[j])) ++j;
      if (j >= text.size() || text[j] != '}') {
        return Status::InvalidArgument(what + " has a '{' that is not an empty '{}'" + allowed);
      }
      i = j;
    } else if (c == '}') {
      return Status::InvalidArgument(what + " has a '}' without its '{'" + allowed);
    } else if (c == '(') {
      ++parens;
    } else if (c == ')') {
      if (--parens < 0) return Status::InvalidArgument(what + " has an unbalanced ')'");
    }
  }
  if (parens != 0) return Status::InvalidArgument(what + " has an unbalanced '('");
  // Names that reach the compiler's internals or inline assembly have no place in a layout.
  static const std::regex kForbidden(
      R"re((^|[^A-Za-z0-9_])(__\w*|asm|_Pragma|operator|extern|template|typename\s*\()\b)re");
  std::smatch m;
  const std::string copy(text);
  if (std::regex_search(copy, m, kForbidden)) {
    return Status::InvalidArgument(what + " uses '" + std::string(Trim(m[2].str())) +
                                   "', which a layout never needs");
  }
  return Status::Ok();
}

std::string SmemProbeSource(const SmemLayoutQuery& query) {
  const std::string element(Trim(query.element_type.empty() ? "cute::half_t" : query.element_type));
  std::ostringstream s;
  // Keep the first ten lines in step with kElementLine/kAtomLine/kTileLine.
  s << "// kernelpro check_smem_layout probe: tile_to_shape(atom, tile shape), printed on the "
       "host.\n"
    << "#include <cstdio>\n"
    << "#include <utility>\n"
    << "#include <cute/tensor.hpp>\n"
    << "#include <cute/atom/mma_traits_sm90_gmma.hpp>\n"
    << "using namespace cute;\n"
    << "// The model's fields, one a line:\n"
    << "using Element = " << element << ";\n"
    << "using KpAtom = " << AsTypeDeclaration(query.atom) << ";\n"
    << "using KpTile = " << AsTypeDeclaration(query.tile_shape) << ";\n"
    << R"cc(
    // Checked before tile_to_shape so that a failure names the mode and both extents.
    template <int... V>
    struct KpExtents {};
    template <int AtomRank, int TileRank>
    struct KpRankFits {
      static_assert(AtomRank <= TileRank, "kp_rank");
      static constexpr bool value = true;
    };
    template <int Mode, class TileExtents, class AtomExtents, int Tile, int Atom>
    struct KpModeDivides {
      static_assert(Atom > 0 && Tile % Atom == 0, "kp_divides");
      static constexpr bool value = true;
    };
    template <class S, std::size_t I>
    constexpr int KpExtent() {
      if constexpr (I < std::size_t(rank_v<S>)) {
        return int(decltype(size<I>(S{}))::value);
      } else {
        return 1;
      }
    }
    using KpAtomShape = decltype(shape(KpAtom{}));
    template <std::size_t... I>
    constexpr bool KpModesDivide(std::index_sequence<I...>) {
      using TileE = KpExtents<KpExtent<KpTile, I>()...>;
      using AtomE = KpExtents<KpExtent<KpAtomShape, I>()...>;
      return (KpModeDivides<int(I), TileE, AtomE, KpExtent<KpTile, I>(),
                            KpExtent<KpAtomShape, I>()>::value &&
              ...);
    }
    constexpr bool KpChecks() {
      if constexpr (is_static<KpTile>::value && is_static<KpAtomShape>::value) {
        static_assert(KpRankFits<int(rank_v<KpAtomShape>), int(rank_v<KpTile>)>::value, "");
        if constexpr (int(rank_v<KpAtomShape>) <= int(rank_v<KpTile>)) {
          return KpModesDivide(std::make_index_sequence<std::size_t(rank_v<KpTile>)>{});
        }
      }
      return true;
    }
    static_assert(KpChecks(), "");
    using KpLayout = decltype(tile_to_shape(KpAtom{}, KpTile{}));
    static_assert(!is_static<KpTile>::value ||
                      decltype(size(KpLayout{}))::value == decltype(size(KpTile{}))::value,
                  "kp_size");

    int main() {
      KpLayout layout{};
      print(layout);
      std::printf("\nkp_counts %lld %lld %lld\n", (long long)size(layout),
                  (long long)cosize(layout), (long long)cute::sizeof_bits_v<Element>);
      return 0;
    }
  )cc";
  return s.str();
}

std::string DiagnoseProbeErrors(const std::string& nvcc_output, const std::string& probe_file,
                                const std::string& include_dir) {
  const std::vector<CompilerError> errors = ParseErrors(nvcc_output);
  if (errors.empty()) {
    // No error line (a crash of the compiler, a missing header): its last words.
    std::vector<std::string> lines = SplitLines(nvcc_output);
    std::string last;
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      if (!Trim(*it).empty()) {
        last = *it;
        break;
      }
    }
    return "does not compile: " +
           OneLineExcerpt(last.empty() ? "nvcc failed without a message" : last, kMaxMessageBytes);
  }
  const CompilerError& e = errors.front();
  const std::string context = Join(e.context, "\n");
  const bool in_probe = fs::path(e.file).filename() == fs::path(probe_file).filename();

  std::smatch m;
  if (Contains(e.message, "\"kp_divides\"")) {
    static const std::regex kWith(
        R"re(Mode=(\d+), TileExtents=KpExtents<([\d, ]*)>, AtomExtents=KpExtents<([\d, ]*)>)re");
    if (std::regex_search(context, m, kWith)) {
      return "does not compile: the tile shape " + ExtentsTuple(m[2].str()) +
             " is not a multiple of the atom's " + ExtentsTuple(m[3].str()) + " in mode " +
             m[1].str() + "; make each tile extent a multiple of the atom's";
    }
    return "does not compile: the tile shape is not a multiple of the atom's shape";
  }
  if (Contains(e.message, "\"kp_rank\"")) {
    static const std::regex kWith(R"re(AtomRank=(\d+), TileRank=(\d+))re");
    if (std::regex_search(context, m, kWith)) {
      return "does not compile: the atom has " + m[1].str() + " modes but the tile shape only " +
             m[2].str() + "; give the tile shape at least as many modes as the atom";
    }
    return "does not compile: the atom has more modes than the tile shape";
  }

  // Where in the model's fields the error was made: the probe line itself, or the last
  // "at line N of <probe>" of the instantiation chain.
  int probe_line = in_probe ? e.line : 0;
  if (!in_probe) {
    static const std::regex kAtLine(R"re(at line (\d+) of (\S+))re");
    for (auto it = std::sregex_iterator(context.begin(), context.end(), kAtLine);
         it != std::sregex_iterator(); ++it) {
      if (fs::path((*it)[2].str()).filename() == fs::path(probe_file).filename()) {
        probe_line = std::atoi((*it)[1].str().c_str());
      }
    }
  }
  const std::string where = probe_line > 0 ? " (in " + FieldForLine(probe_line) + ")" : "";

  static const std::regex kStaticAssert(R"re(static assertion failed with "(.*)")re");
  if (std::regex_search(e.message, m, kStaticAssert)) {
    return "does not compile: CUTLASS's static_assert at " + RelativeTo(e.file, include_dir) + ":" +
           std::to_string(e.line) + " failed: " + OneLineExcerpt(m[1].str(), kMaxMessageBytes) +
           where;
  }
  if (Contains(e.message, "static assertion failed")) {
    // No message: the asserted condition (the line under the error) says what was checked.
    std::string condition = e.context.empty() ? "" : std::string(Trim(e.context.front()));
    return "does not compile: CUTLASS's static_assert at " + RelativeTo(e.file, include_dir) + ":" +
           std::to_string(e.line) + " failed: " + OneLineExcerpt(condition, kMaxMessageBytes) +
           where;
  }
  std::string location =
      in_probe ? "" : " at " + RelativeTo(e.file, include_dir) + ":" + std::to_string(e.line);
  return "does not compile: " + OneLineExcerpt(e.message, kMaxMessageBytes) + HintFor(e.message) +
         location + where;
}

Result<SmemLayoutDiagnosis> CheckSmemLayout(const SmemLayoutQuery& query,
                                            const SmemProbeOptions& options) {
  if (Status s = CheckProbeExpression(query.atom, "the atom"); !s.ok()) return s;
  if (Status s = CheckProbeExpression(query.tile_shape, "the tile shape"); !s.ok()) return s;
  if (!query.element_type.empty()) {
    if (Status s = CheckProbeExpression(query.element_type, "the element type"); !s.ok()) return s;
  }
  if (options.include_dir.empty() || !fs::exists(options.include_dir + "/cute/tensor.hpp")) {
    return Status::NotFound("no CuTe headers under '" + options.include_dir +
                            "' (give the CUTLASS include folder, e.g. with --cutlass-dir)");
  }
  const std::string nvcc = options.nvcc.empty() ? FindTool("nvcc") : options.nvcc;
  if (nvcc.empty()) {
    return Status::Unavailable("check_smem_layout needs nvcc (a CUDA toolkit; set KERNELPRO_NVCC)");
  }

  const std::string source = SmemProbeSource(query);
  const std::string arch_number =
      options.arch.rfind("sm_", 0) == 0 ? options.arch.substr(3) : options.arch;
  // One real architecture (no PTX for a second one): half the compile time of -arch=sm_90a.
  const std::vector<std::string> flags = {
      "-std=c++17", "--expt-relaxed-constexpr",
      "-gencode=arch=compute_" + arch_number + ",code=sm_" + arch_number,
      "-I" + options.include_dir};

  const std::string key = Sha256Hex(std::string(kProbeVersion) + "\n" + source + "\n" +
                                    Join(flags, " ") + "\n" + VersionText(options.include_dir));
  const std::string cache_file =
      options.cache_dir.empty() ? "" : options.cache_dir + "/smem_probe/" + key + ".json";
  if (!cache_file.empty()) {
    if (auto cached = ReadJsonFile(cache_file); cached.ok()) {
      SmemLayoutDiagnosis d = SmemLayoutDiagnosis::FromJson(*cached);
      d.from_cache = true;
      return d;
    }
  }

  std::error_code ec;
  const fs::path scratch =
      fs::temp_directory_path(ec) /
      ("kp_smem_probe_" + std::to_string(::getpid()) + "_" + key.substr(0, 16) + "_" +
       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::create_directories(scratch, ec);
  if (ec) return Status::IoError("cannot make a scratch folder for the probe: " + ec.message());
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{scratch};
  const std::string probe_path = (scratch / kProbeFileName).string();
  if (Status s = WriteFileAtomically(probe_path, source); !s.ok()) return s;

  ProcessOptions compile;
  compile.argv = {nvcc};
  compile.argv.insert(compile.argv.end(), flags.begin(), flags.end());
  compile.argv.insert(compile.argv.end(), {"-o", (scratch / "probe").string(), probe_path});
  compile.working_dir = scratch.string();
  compile.limits.wall_timeout = std::chrono::seconds(options.timeout_seconds);
  auto compiled = RunProcess(compile);
  if (!compiled.ok()) return compiled.status();
  if (!compiled->started) return Status::Unavailable("cannot run nvcc: " + compiled->start_error);
  if (compiled->timed_out) {
    return Status::Timeout("the probe's compile took longer than " +
                           std::to_string(options.timeout_seconds) + " s");
  }

  SmemLayoutDiagnosis d;
  if (!compiled->exited || compiled->exit_code != 0) {
    const std::string output = compiled->stderr_text + "\n" + compiled->stdout_text;
    d.summary = DiagnoseProbeErrors(output, kProbeFileName, options.include_dir);
    const std::vector<CompilerError> errors = ParseErrors(output);
    if (!errors.empty()) {
      d.first_error = OneLineExcerpt(RelativeTo(errors.front().file, options.include_dir) + "(" +
                                         std::to_string(errors.front().line) +
                                         "): error: " + errors.front().message,
                                     600);
    }
  } else {
    ProcessOptions run;
    run.argv = {(scratch / "probe").string()};
    run.working_dir = scratch.string();
    run.limits.wall_timeout = std::chrono::seconds(30);
    auto ran = RunProcess(run);
    if (!ran.ok()) return ran.status();
    std::vector<std::string> lines = SplitLines(ran->stdout_text);
    static const std::regex kCounts(R"re(^kp_counts (\d+) (\d+) (\d+)\s*$)re");
    std::smatch m;
    if (!ran->exited || ran->exit_code != 0 || lines.size() < 2 ||
        !std::regex_match(lines[1], m, kCounts)) {
      return Status::Internal("the probe compiled but did not print its layout (" +
                              ran->Describe() + ")");
    }
    d.compiles = true;
    d.layout = std::string(Trim(lines[0]));
    d.size = std::atoll(m[1].str().c_str());
    d.cosize = std::atoll(m[2].str().c_str());
    const std::int64_t bits = std::atoll(m[3].str().c_str());
    d.smem_bytes = (d.cosize * bits + 7) / 8;
    const std::string element(
        Trim(query.element_type.empty() ? "cute::half_t" : query.element_type));
    d.summary = "compiles: layout " + d.layout + " over " + std::to_string(d.size) + " elements (" +
                SmemBytes(d.smem_bytes) + " of " + element + ")";
    if (d.smem_bytes > kHopperMaxSmemBytes) {
      d.summary += "; that is more than the 227 KiB of shared memory a Hopper block can have";
    }
  }
  if (!cache_file.empty()) {
    // A cache that cannot be written costs a compile next time, nothing else.
    (void)WriteJsonFile(cache_file, d.ToJson());
  }
  return d;
}

}  // namespace kernelpro::cutlass
