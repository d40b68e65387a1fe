#include "agents/feedback_mode.h"

#include <array>
#include <utility>

#include "core/enum_names.h"
#include "core/text.h"

namespace kernelpro::agents {
namespace {

constexpr std::array<std::pair<FeedbackMode, const char*>, 4> kFeedback = {
    {{FeedbackMode::kTools, "tools"},
     {FeedbackMode::kReactive, "reactive"},
     {FeedbackMode::kRaw, "raw"},
     {FeedbackMode::kNone, "none"}}};

}  // namespace

std::string ToString(FeedbackMode mode) { return NameOf(kFeedback, mode); }

std::optional<FeedbackMode> ParseFeedbackMode(const std::string& text) {
  std::string t = Lower(text);
  if (t == "proactive") t = "tools";
  return ValueOf(kFeedback, t);
}

}  // namespace kernelpro::agents
