#include "agents/types.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/enum_names.h"
#include "core/text.h"

namespace kernelpro::agents {
namespace {

constexpr std::array<std::pair<InputKind, const char*>, 3> kKinds = {
    {{InputKind::kPyTorch, "pytorch"}, {InputKind::kTriton, "triton"}, {InputKind::kCuda, "cuda"}}};
constexpr std::array<std::pair<PromptMode, const char*>, 3> kModes = {
    {{PromptMode::kInitial, "initial"},
     {PromptMode::kDebug, "debug"},
     {PromptMode::kOptimize, "optimize"}}};
constexpr std::array<std::pair<FeedbackMode, const char*>, 4> kFeedback = {
    {{FeedbackMode::kTools, "tools"},
     {FeedbackMode::kReactive, "reactive"},
     {FeedbackMode::kRaw, "raw"},
     {FeedbackMode::kNone, "none"}}};
constexpr std::array<std::pair<MemorySection, const char*>, 5> kSections = {
    {{MemorySection::kSearchFindings, "search_findings"},
     {MemorySection::kErrorsAndCorrections, "errors_and_corrections"},
     {MemorySection::kSuccessfulPatterns, "successful_patterns"},
     {MemorySection::kKeyFiles, "key_files"},
     {MemorySection::kLearnings, "learnings"}}};
// The headings of the memory file the agents read and write.
constexpr std::array<std::pair<MemorySection, const char*>, 5> kSectionTitles = {
    {{MemorySection::kSearchFindings, "Search Findings"},
     {MemorySection::kErrorsAndCorrections, "Errors & Corrections"},
     {MemorySection::kSuccessfulPatterns, "Successful Patterns"},
     {MemorySection::kKeyFiles, "Key Files"},
     {MemorySection::kLearnings, "Learnings"}}};

}  // namespace

std::string ToString(InputKind kind) { return NameOf(kKinds, kind); }
std::string ToString(PromptMode mode) { return NameOf(kModes, mode); }
std::string ToString(FeedbackMode mode) { return NameOf(kFeedback, mode); }
std::string ToString(MemorySection section) { return NameOf(kSections, section); }
std::optional<InputKind> ParseInputKind(const std::string& text) {
  return ValueOf(kKinds, Lower(text));
}
std::optional<PromptMode> ParsePromptMode(const std::string& text) {
  std::string t = Lower(text);
  if (t == "optimise") t = "optimize";
  return ValueOf(kModes, t);
}
std::optional<FeedbackMode> ParseFeedbackMode(const std::string& text) {
  std::string t = Lower(text);
  if (t == "proactive") t = "tools";
  return ValueOf(kFeedback, t);
}
std::optional<MemorySection> ParseMemorySection(const std::string& text) {
  return ValueOf(kSections, Lower(text));
}

std::string Title(MemorySection section) { return NameOf(kSectionTitles, section); }

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

int GpuTarget::major() const {
  std::string digits;
  for (char c : arch) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  if (digits.size() < 2) return 0;
  return std::stoi(digits.substr(0, digits.size() - 1));
}

int GpuTarget::minor() const {
  std::string digits;
  for (char c : arch) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
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
  std::string digits;
  for (char c : t) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  const bool arch_like =
      t.starts_with("sm_") || t.starts_with("sm") || std::all_of(t.begin(), t.end(), [](char c) {
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

Json ToJson(const ProfileAnalysis& a) {
  Json recs = Json::array();
  for (const AnalysisRecommendation& r : a.recommendations) {
    recs.push_back({{"priority", r.priority}, {"action", r.action}, {"rationale", r.rationale}});
  }
  return {{"bottleneck", a.bottleneck},
          {"severity", a.severity},
          {"summary", a.summary},
          {"recommendations", recs}};
}

Result<ProfileAnalysis> ProfileAnalysisFromJson(const Json& json) {
  if (!json.is_object()) return Status::InvalidArgument("profile analysis: not a JSON object");
  ProfileAnalysis a;
  a.bottleneck = JsonGet<std::string>(json, "bottleneck", "");
  a.severity = Lower(JsonGet<std::string>(json, "severity", ""));
  a.summary = JsonGet<std::string>(json, "summary", "");
  if (a.bottleneck.empty()) return Status::InvalidArgument("profile analysis: no bottleneck");
  const Json recs = json.contains("recommendations") ? json["recommendations"] : Json::array();
  if (!recs.is_array()) {
    return Status::InvalidArgument("profile analysis: recommendations is not a list");
  }
  int next = 1;
  for (const Json& r : recs) {
    AnalysisRecommendation rec;
    rec.priority = next;  // unnumbered entries keep their place in the list
    if (r.is_string()) {
      rec.action = r.get<std::string>();
    } else if (r.is_object()) {
      rec.action = JsonGet<std::string>(r, "action", "");
      rec.rationale = JsonGet<std::string>(r, "rationale", "");
      rec.priority = JsonGet<int>(r, "priority", next);
    }
    if (rec.action.empty()) continue;  // forgiving: skip what cannot be acted on
    if (rec.priority < 1) rec.priority = next;
    a.recommendations.push_back(std::move(rec));
    ++next;
  }
  std::stable_sort(a.recommendations.begin(), a.recommendations.end(),
                   [](const AnalysisRecommendation& x, const AnalysisRecommendation& y) {
                     return x.priority < y.priority;
                   });
  return a;
}

Json ProfileAnalysisSchema() {
  return Json::parse(R"({
    "type": "object",
    "properties": {
      "bottleneck": {"type": "string", "description": "compute, memory, latency or mixed, and what limits the kernel"},
      "severity": {"type": "string", "enum": ["critical", "high", "medium", "low"]},
      "summary": {"type": "string"},
      "recommendations": {
        "type": "array",
        "items": {
          "type": "object",
          "properties": {
            "priority": {"type": "integer"},
            "action": {"type": "string"},
            "rationale": {"type": "string"}
          },
          "required": ["priority", "action"]
        }
      }
    },
    "required": ["bottleneck", "severity", "recommendations"]
  })");
}

}  // namespace kernelpro::agents
