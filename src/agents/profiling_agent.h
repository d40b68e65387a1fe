// The profiling agent (paper §3.2.3, Stage 2): turns the profile of one candidate into the
// analysis the programmer's next optimise prompt receives.
//
// The prompt follows the paper's order: the SASS summary (tensor-core instructions by
// generation, global load/store widths, async copies, spills, registers), the timeline summary
// (end-to-end time, GPU busy time, launch overhead, kernels, syncs, copies, idle gaps), the tools'
// "Automated Bottleneck Analysis" (the registry filtered by the Stage-1 class), then the ncu
// counters by category (compute, memory, occupancy, stalls). The LLM answers with a structured
// ProfileAnalysis. What reaches the programmer (`feedback`) is that analysis rendered as markdown,
// followed by the evidence the mode gave the LLM, so the programmer can check a recommendation
// against its numbers.
//
// The four feedback modes (FeedbackMode, the ablations of appendices C and F):
//   kTools     proactive, the default: every tool relevant to the Stage-1 class runs before the
//              LLM call and its guidance is in the prompt; feedback = analysis + that guidance.
//   kReactive  the same profile without the guidance; the relevant tools are offered as functions
//              (one per tool, no arguments) through llm::RunToolConversation, each with a call
//              budget, and the calls the LLM made are recorded; feedback = analysis + the
//              findings of the tools it called.
//   kRaw       about 50 ncu counters as name=value lines: no tools, no Stage-1 class, no SASS or
//              timeline summary; feedback = analysis + the same counters.
//   kNone      no LLM call and no feedback: only build and correctness errors reach the
//              programmer (the orchestrator's part).
// A failed or malformed analysis is a value: `error` says what happened and `feedback` falls back
// to the mode's evidence alone (the tools' guidance in kTools mode), so the search continues.
//
// Everything here is a pure function of its inputs apart from the backend call; the functions
// are safe to call from several threads at once when the backend and the registry are (both are
// documented as such).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/feedback_mode.h"
#include "agents/profile_analysis.h"
#include "llm/backend.h"
#include "profile/metrics.h"
#include "roofline/reference_analysis.h"
#include "tools/registry.h"
#include "tools/render.h"

namespace kernelpro::agents {

// What the profiling agent knows about one candidate. The metrics are borrowed: they must outlive
// the input.
struct ProfilingInput {
  explicit ProfilingInput(const profile::Metrics& profiled) : metrics(profiled) {}

  const profile::Metrics& metrics;  // ncu, SASS and timeline views (any may be missing)
  std::optional<roofline::ReferenceAnalysis> stage1;  // unset: no class, every speed tool runs
  const tools::ToolRegistry* registry = nullptr;      // null: the built-in tools
  std::string candidate_code;                         // shown to the LLM; may be empty
  std::optional<double> speedup;                      // over the reference, when it was timed
  tools::ThresholdOverrides overrides;  // per-tool thresholds, as `kernelpro advise` takes them
  bool energy_tools = true;             // also run the energy-only tools (kTools, kReactive)
};

struct ProfilingOptions {
  FeedbackMode mode = FeedbackMode::kTools;
  int max_tokens = 4096;              // of the analysis reply
  std::optional<double> temperature;  // unset: the server's default
  tools::RenderOptions render;        // bounds of the guidance text
  // kReactive: calls each tool may make per analysis (the same metrics give the same finding, so
  // a second call teaches the model nothing), and model turns before the answer is due.
  int reactive_tool_budget = 1;
  int reactive_max_turns = 8;
};

struct ProfilingResult {
  FeedbackMode mode = FeedbackMode::kTools;
  std::optional<ProfileAnalysis> analysis;  // unset when the LLM failed or answered badly
  std::string feedback;                     // what the programmer's optimise prompt receives
  std::optional<llm::Error> error;          // why `analysis` is unset
  llm::Usage usage;                         // summed over every model turn
  bool llm_called = false;
  std::string system_prompt, prompt;       // what was sent (empty in kNone mode)
  std::string evidence;                    // the mode's evidence: guidance, tool findings, counters
  std::vector<std::string> tools_offered;  // kReactive: the functions the LLM could call
  std::vector<std::string> tool_calls;     // kReactive: the calls it made, in order
  std::string raw_text;                    // the final reply as the model wrote it
};

// The system prompt for `mode` (empty for kNone).
std::string ProfilingSystemPrompt(FeedbackMode mode);

// The user prompt for `mode` (empty for kNone).
std::string BuildProfilingPrompt(const ProfilingInput& input, FeedbackMode mode);

// The ~50 ncu counters of the raw-metrics condition, in the order they are listed.
const std::vector<std::string>& RawCounterNames();

// The analysis as the programmer reads it: bottleneck, severity, summary, ranked recommendations.
std::string RenderProfileAnalysis(const ProfileAnalysis& analysis);

ProfilingResult RunProfilingAgent(llm::Backend& backend, const ProfilingInput& input,
                                  const ProfilingOptions& options = {});

}  // namespace kernelpro::agents
