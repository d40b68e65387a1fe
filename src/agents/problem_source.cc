#include "agents/problem_source.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

#include "core/enum_names.h"
#include "core/text.h"

namespace kernelpro::agents {
namespace {

constexpr std::array<std::pair<InputKind, const char*>, 3> kKinds = {
    {{InputKind::kPyTorch, "pytorch"}, {InputKind::kTriton, "triton"}, {InputKind::kCuda, "cuda"}}};

}  // namespace

std::string ToString(InputKind kind) { return NameOf(kKinds, kind); }
std::optional<InputKind> ParseInputKind(const std::string& text) {
  return ValueOf(kKinds, Lower(text));
}

std::string ProgramKindName(InputKind kind) {
  return kind == InputKind::kTriton ? "Triton" : kind == InputKind::kCuda ? "CUDA" : "Python";
}

InputKind DetectInputKind(const std::string& code) {
  auto has = [&](const char* s) { return code.find(s) != std::string::npos; };
  if (has("import triton") || has("from triton")) return InputKind::kTriton;
  if (has("load_inline") || has("__global__") || has("cpp_extension.load(")) {
    return InputKind::kCuda;
  }
  return InputKind::kPyTorch;
}

Result<ProblemSource> ReadProblemSource(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("problem file " + path + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  ProblemSource p;
  p.path = path;
  p.code = text.str();
  const bool cuda_file = path.size() > 3 && path.compare(path.size() - 3, 3, ".cu") == 0;
  // A program names its launcher: ENTRY = "name" (in a .cu file, inside its kernelpro block).
  static const std::regex kEntry(R"re((^|\n)\s*ENTRY\s*=\s*["']([A-Za-z_][A-Za-z0-9_]*)["'])re");
  static const std::regex kReference(R"re((^|\n)\s*REFERENCE\s*=\s*["']([^"'\n]+)["'])re");
  std::smatch entry;
  const bool has_model = std::regex_search(p.code, std::regex(R"((^|\n)\s*class\s+Model\b)"));
  if (cuda_file) {
    if (p.code.find("/* kernelpro") == std::string::npos) {
      return Status::InvalidArgument(path +
                                     ": a CUDA program needs a /* kernelpro ... */ block "
                                     "defining ENTRY, get_inputs() and get_init_inputs() "
                                     "(docs/programs.md)");
    }
  } else if (has_model) {
    p.kind = DetectInputKind(p.code);
    return p;
  }
  if (!std::regex_search(p.code, entry, kEntry)) {
    return Status::InvalidArgument(
        path + (cuda_file ? ": its kernelpro block defines no ENTRY = \"name\" (docs/programs.md)"
                          : " defines no class Model (KernelBench format: class Model(nn.Module), "
                            "get_inputs(), get_init_inputs()) and no ENTRY naming a launcher "
                            "(a Triton or CUDA program: docs/programs.md)"));
  }
  p.program = true;
  p.entry = entry[2].str();
  p.kind = cuda_file ? InputKind::kCuda : DetectInputKind(p.code);
  std::smatch reference;
  if (std::regex_search(p.code, reference, kReference)) {
    std::filesystem::path ref = reference[2].str();
    if (ref.is_relative()) ref = std::filesystem::path(path).parent_path() / ref;
    p.reference_path = ref.lexically_normal().string();
    std::ifstream ref_in(p.reference_path);
    if (!ref_in) {
      return Status::NotFound(path + ": its REFERENCE " + p.reference_path + " cannot be read");
    }
    std::stringstream ref_text;
    ref_text << ref_in.rdbuf();
    p.reference_code = ref_text.str();
  }
  return p;
}

}  // namespace kernelpro::agents
