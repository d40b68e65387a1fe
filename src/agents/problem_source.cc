#include "agents/problem_source.h"

#include <array>
#include <fstream>
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
  if (p.code.find("class Model") == std::string::npos) {
    return Status::InvalidArgument(path +
                                   " defines no class Model (KernelBench format: class "
                                   "Model(nn.Module), get_inputs(), get_init_inputs())");
  }
  p.kind = DetectInputKind(p.code);
  return p;
}

}  // namespace kernelpro::agents
