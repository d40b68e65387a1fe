#include "agents/gpu_target.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "core/text.h"

namespace kernelpro::agents {
namespace {

// The digits of `text` in order: "sm_90a" → "90", "8.9" → "89".
std::string Digits(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  return digits;
}

}  // namespace

int GpuTarget::major() const {
  const std::string digits = Digits(arch);
  if (digits.size() < 2) return 0;
  return std::stoi(digits.substr(0, digits.size() - 1));
}

int GpuTarget::minor() const {
  const std::string digits = Digits(arch);
  return digits.empty() ? 0 : digits.back() - '0';
}

Result<GpuTarget> ParseGpuTarget(const std::string& text) {
  static const std::array<std::pair<const char*, const char*>, 12> kByName = {{
      {"a100", "sm_80"},
      {"a10", "sm_86"},
      {"a40", "sm_86"},
      {"rtx 3090", "sm_86"},
      {"l4", "sm_89"},
      {"l40s", "sm_89"},
      {"rtx 4090", "sm_89"},
      {"h100", "sm_90"},
      {"h200", "sm_90"},
      {"gh200", "sm_90"},
      {"b200", "sm_100"},
      {"gb200", "sm_100"},
  }};
  std::string t = Lower(text);
  t.erase(std::remove(t.begin(), t.end(), '\t'), t.end());
  if (t.starts_with("nvidia ")) t = t.substr(7);
  GpuTarget target;
  // Longest name first, so "l40s" wins over "l4" and "gh200" over "h200".
  const std::pair<const char*, const char*>* best = nullptr;
  for (const auto& entry : kByName) {
    if (t.find(entry.first) != std::string::npos &&
        (best == nullptr || std::string(entry.first).size() > std::string(best->first).size())) {
      best = &entry;
    }
  }
  if (best != nullptr) {
    target.arch = best->second;
    target.name = text;
    return target;
  }
  const std::string digits = Digits(t);
  const bool arch_like = t.starts_with("sm") || std::all_of(t.begin(), t.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
                         });
  if (!arch_like || digits.size() < 2 || digits.size() > 3) {
    return Status::InvalidArgument("unknown GPU '" + text +
                                   "': give an architecture (sm_80, sm_90, sm_100) or a name "
                                   "(A100, H100, H200, L40S, RTX 4090, B200)");
  }
  target.arch = "sm_" + digits;
  if (t.back() == 'a') target.arch += "a";
  return target;
}

}  // namespace kernelpro::agents
