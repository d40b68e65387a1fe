#include "agents/profile_analysis.h"

#include <algorithm>
#include <utility>

#include "core/text.h"

namespace kernelpro::agents {

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
      "bottleneck": {
        "type": "string",
        "description": "compute, memory, latency or mixed, and what limits the kernel"
      },
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
