#include "search/profile_feedback.h"

#include <utility>

#include "tools/render.h"
#include "tools/work_check.h"

namespace kernelpro::search {

ProfileFeedback AnalyzeProfile(Result<profile::Metrics> profiled, const ProfileFeedbackInput& input,
                               llm::Backend& backend) {
  ProfileFeedback out;
  if (profiled.ok()) {
    out.metrics = std::move(*profiled);
  } else {
    out.metrics.notes.push_back("profile failed: " + profiled.status().message());
  }
  tools::AnalysisOptions analysis_options;
  if (input.stage1) {
    analysis_options.bottleneck = input.stage1->bottleneck;
    analysis_options.work = tools::ProblemWorkOf(*input.stage1);
  }
  analysis_options.overrides = input.overrides;
  analysis_options.energy = input.energy_tools;
  out.analysis = input.registry->Analyze(out.metrics, analysis_options);

  agents::ProfilingInput agent_input(out.metrics);
  agent_input.stage1 = input.stage1;
  agent_input.registry = input.registry;
  agent_input.candidate_code = input.candidate_code;
  agent_input.speedup = input.speedup;
  agent_input.overrides = input.overrides;
  agent_input.energy_tools = input.energy_tools;
  agents::ProfilingOptions profiling;
  profiling.mode = input.mode;
  out.agent = agents::RunProfilingAgent(backend, agent_input, profiling);

  if (input.mode == agents::FeedbackMode::kReactive) {
    out.tools_fired = out.agent.tool_calls;
  } else if (input.mode == agents::FeedbackMode::kTools) {
    for (const tools::ToolOutput& f : out.analysis.findings) out.tools_fired.push_back(f.tool);
  }
  return out;
}

Result<Json> StoreProfileFeedback(store::RunStore& store, std::int64_t candidate_id,
                                  agents::FeedbackMode mode, const ProfileFeedback& feedback) {
  store::MetricsRecord m;
  m.candidate_id = candidate_id;
  m.metrics = ToJson(feedback.metrics);
  if (auto id = store.AddMetrics(m); !id.ok()) return id.status();
  store::ToolOutputRecord t;
  t.candidate_id = candidate_id;
  t.analysis = ToJson(feedback.analysis);
  t.guidance = tools::RenderGuidance(feedback.analysis);
  if (auto id = store.AddToolOutput(t); !id.ok()) return id.status();
  const agents::ProfilingResult& agent = feedback.agent;
  store::ProfileAnalysisRecord a;
  a.candidate_id = candidate_id;
  a.feedback_mode = agents::ToString(mode);
  if (agent.analysis) {
    a.bottleneck = agent.analysis->bottleneck;
    a.severity = agent.analysis->severity;
    a.analysis = agents::ToJson(*agent.analysis);
  }
  a.feedback = agent.feedback;
  if (auto id = store.AddProfileAnalysis(a); !id.ok()) return id.status();
  const auto& timeline = feedback.metrics.timeline;
  const double gpu_s = timeline && timeline->gpu_busy_us > 0 ? timeline->gpu_busy_us * 1e-6 : 0;
  return Json{{"feedback", agent.feedback},
              {"tools_fired", feedback.tools_fired},
              {"error", agent.error ? agent.error->ToString() : ""},
              {"notes", feedback.metrics.notes},
              {"gpu_busy_s", gpu_s}};
}

Result<std::optional<Json>> ReusedProfilePayload(store::RunStore& store, std::int64_t candidate_id,
                                                 agents::FeedbackMode mode) {
  auto earlier = store.LatestProfileAnalysis(candidate_id);
  if (!earlier.ok()) return earlier.status();
  if (!*earlier) return std::optional<Json>();
  std::vector<std::string> fired;
  auto tools = store.LatestToolOutput(candidate_id);
  if (!tools.ok()) return tools.status();
  if (*tools && mode == agents::FeedbackMode::kTools) {
    for (const Json& f : JsonGet<Json>((*tools)->analysis, "findings", Json::array())) {
      fired.push_back(JsonGet<std::string>(f, "tool", ""));
    }
  }
  return std::optional<Json>(
      Json{{"feedback", (*earlier)->feedback}, {"tools_fired", fired}, {"reused", true}});
}

}  // namespace kernelpro::search
