// What the agents pass between each other: the problem as the LLM sees it, the target GPU, the
// prompt, the candidates the programmer proposes, the profiling agent's analysis and the search
// memory's entries.
//
// The agents are thin and deterministic around the LLM (paper §3.1–§3.2, §3.4): they assemble a
// prompt from parts, ask for structured output, validate it and hand the result on. Everything
// here is a plain value; copy freely across threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::agents {

// The language of the reference the user gave (paper §3.2.5). All three are normalised to the
// KernelBench form (class Model + get_inputs + get_init_inputs); the kind selects the prompt's
// input section.
enum class InputKind { kPyTorch, kTriton, kCuda };

// Initial: reference only. Debug: fix a failing candidate (compiler or correctness errors).
// Optimize: improve a working candidate using its profiling analysis.
enum class PromptMode { kInitial, kDebug, kOptimize };

// What the profiling agent gives the programmer (paper appendices C and F):
//   kTools     proactive: every relevant micro-profiling tool runs and its guidance is injected
//              (the default);
//   kReactive  the tools are offered as callable functions and the LLM decides what to call;
//   kRaw       about 50 ncu counters as name=value, no tools, no classification;
//   kNone      no profiling feedback at all (only compile and correctness errors reach the LLM).
enum class FeedbackMode { kTools, kReactive, kRaw, kNone };

std::string ToString(InputKind kind);
std::string ToString(PromptMode mode);
std::string ToString(FeedbackMode mode);
std::optional<InputKind> ParseInputKind(const std::string& text);
std::optional<PromptMode> ParsePromptMode(const std::string& text);      // "optimize" or "optimise"
std::optional<FeedbackMode> ParseFeedbackMode(const std::string& text);  // tools|reactive|raw|none

// A problem file as the prompts show it.
struct ProblemSource {
  std::string path;
  std::string code;  // the file's text
  InputKind kind = InputKind::kPyTorch;
};

// Reads a problem file and detects its kind: Triton when it imports triton, CUDA when its
// reference builds CUDA source itself (load_inline / a __global__ kernel), PyTorch otherwise.
Result<ProblemSource> ReadProblemSource(const std::string& path);
InputKind DetectInputKind(const std::string& code);

// The GPU the prompts are written for. `arch` is "sm_80", "sm_90", "sm_100", ...; from the detected
// device or --gpu.
struct GpuTarget {
  std::string arch = "sm_90";
  std::string name;   // "NVIDIA H200", for the prompt's text; may be empty
  int major() const;  // 9 for sm_90 / sm_90a
  int minor() const;  // 0 for sm_90
};

// "sm_90", "sm90", "90", "9.0", "H100", "H200", "A100", "L40S", "RTX 4090", "B200" → a target.
Result<GpuTarget> ParseGpuTarget(const std::string& text);

// One prompt, ready to send: a system part and a user part, plus what the builder did.
struct Prompt {
  std::string system;
  std::string user;
  std::vector<std::string> sections;  // component names in the order they appear
  std::vector<std::string> trimmed;   // components dropped or shortened to fit the size budget
};

// One candidate kernel the programmer proposed.
struct Candidate {
  std::string strategy;  // the optimisation idea in a sentence
  std::string code;      // a complete Python file defining ModelNew
};

// One recommendation in the profiling agent's analysis, as the LLM wrote it with its rationale;
// lower priority numbers come first. (A tool's rule-based advice is kernelpro::Recommendation.)
struct AnalysisRecommendation {
  int priority = 1;
  std::string action;
  std::string rationale;
};

// The profiling agent's structured answer (paper §3.2.3: ProfileAnalysis).
struct ProfileAnalysis {
  std::string bottleneck;  // compute | memory | latency | mixed | other words the LLM chose
  std::string severity;    // critical | high | medium | low
  std::string summary;
  std::vector<AnalysisRecommendation> recommendations;
};

Json ToJson(const ProfileAnalysis& analysis);
Result<ProfileAnalysis> ProfileAnalysisFromJson(const Json& json);
// The JSON Schema the LLM is asked to answer with.
Json ProfileAnalysisSchema();

// The five sections of the search memory (paper §3.4).
enum class MemorySection {
  kSearchFindings,
  kErrorsAndCorrections,
  kSuccessfulPatterns,
  kKeyFiles,
  kLearnings
};
std::string ToString(MemorySection section);  // "search_findings", ...
std::string Title(MemorySection section);     // "Search Findings", ...
std::optional<MemorySection> ParseMemorySection(const std::string& text);

struct MemoryEntry {
  MemorySection section = MemorySection::kLearnings;
  std::string text;
  int iteration = 0;  // the iteration it was learnt in
};

}  // namespace kernelpro::agents
