// What the profile step makes of one correct candidate's profile (paper §3.2): the micro-
// profiling tools' analysis, the profiling agent's feedback for the next optimise prompt, and the
// run store rows that keep all of it (metrics, tool output, profile analysis).
//
// The orchestrator calls AnalyzeProfile outside any transaction (the agent may call the LLM) and
// StoreProfileFeedback inside the step's transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/feedback_mode.h"
#include "agents/profiling_agent.h"
#include "core/json_io.h"
#include "core/status.h"
#include "llm/backend.h"
#include "profile/metrics.h"
#include "roofline/reference_analysis.h"
#include "store/run_store.h"
#include "tools/registry.h"

namespace kernelpro::search {

struct ProfileFeedbackInput {
  const tools::ToolRegistry* registry = nullptr;      // required
  std::optional<roofline::ReferenceAnalysis> stage1;  // unset: every speed tool runs
  tools::ThresholdOverrides overrides;                // per-tool thresholds (--threshold)
  agents::FeedbackMode mode = agents::FeedbackMode::kTools;
  std::string candidate_code;
  std::optional<double> speedup;  // the candidate's, over the reference
  // Also run the energy-only tools: `optimize --energy aware` only (search/run_config.h).
  bool energy_tools = true;
};

struct ProfileFeedback {
  profile::Metrics metrics;  // with a note when the profile failed
  tools::Analysis analysis;
  agents::ProfilingResult agent;
  std::vector<std::string> tools_fired;  // tools mode: the findings; reactive: the LLM's calls
};

// A failed profile still gets an analysis (of nothing) and the agent's answer, with the failure
// in the metrics' notes.
ProfileFeedback AnalyzeProfile(Result<profile::Metrics> profiled, const ProfileFeedbackInput& input,
                               llm::Backend& backend);

// The rows of the feedback for `candidate_id`; returns the profile step's payload
// ({feedback, tools_fired, error, notes, gpu_busy_s}).
Result<Json> StoreProfileFeedback(store::RunStore& store, std::int64_t candidate_id,
                                  agents::FeedbackMode mode, const ProfileFeedback& feedback);

// The payload of the profile an earlier iteration stored for the same source (marked "reused";
// tools_fired only in tools mode); none when the candidate was never profiled.
Result<std::optional<Json>> ReusedProfilePayload(store::RunStore& store, std::int64_t candidate_id,
                                                 agents::FeedbackMode mode);

}  // namespace kernelpro::search
