#include "agents/prompt_mode.h"

#include <array>
#include <utility>

#include "core/enum_names.h"
#include "core/text.h"

namespace kernelpro::agents {
namespace {

constexpr std::array<std::pair<PromptMode, const char*>, 3> kModes = {
    {{PromptMode::kInitial, "initial"},
     {PromptMode::kDebug, "debug"},
     {PromptMode::kOptimize, "optimize"}}};

}  // namespace

std::string ToString(PromptMode mode) { return NameOf(kModes, mode); }

std::optional<PromptMode> ParsePromptMode(const std::string& text) {
  std::string t = Lower(text);
  if (t == "optimise") t = "optimize";
  return ValueOf(kModes, t);
}

}  // namespace kernelpro::agents
