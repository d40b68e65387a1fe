// The profiling agent's structured answer (paper §3.2.3: ProfileAnalysis): what limits the
// candidate and what the programmer should change, ranked. The LLM writes it as JSON against
// ProfileAnalysisSchema(); it is read forgivingly and stored with the run. Plain values; copy
// freely across threads.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::agents {

// One recommendation in the profiling agent's analysis, as the LLM wrote it with its rationale;
// lower priority numbers come first. (A tool's rule-based advice is kernelpro::Recommendation.)
struct AnalysisRecommendation {
  int priority = 1;
  std::string action;
  std::string rationale;
};

struct ProfileAnalysis {
  std::string bottleneck;  // compute | memory | latency | mixed | other words the LLM chose
  std::string severity;    // critical | high | medium | low
  std::string summary;
  std::vector<AnalysisRecommendation> recommendations;
};

Json ToJson(const ProfileAnalysis& analysis);
// Forgiving: the severity is lower-cased, a bare string is an action, entries without an action
// are dropped, and the recommendations come back sorted by priority. Errors: not an object, no
// bottleneck, recommendations that are not a list.
Result<ProfileAnalysis> ProfileAnalysisFromJson(const Json& json);
// The JSON Schema the LLM is asked to answer with.
Json ProfileAnalysisSchema();

}  // namespace kernelpro::agents
