// The profiling agent on a real H200 recording (tests/fixtures/h200-advise/swish: the candidate's
// ncu, SASS and timeline artifacts, and the Stage-1 analysis of its problem). The prompt of each
// feedback mode is a golden file, reviewed as text; regenerate after an intended change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='ProfilingGolden*'
// and read the diff before committing it. The LLM's side is replayed from cassettes
// (tests/fixtures/cassettes/README.md).
#include "agents/profiling_agent.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "agents/agent_testing.h"
#include "llm/cassette.h"
#include "llm/scripted_backend_testing.h"
#include "profile/collect.h"

namespace kernelpro::agents {
namespace agents_profiling_agent_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The swish recording: metrics, Stage 1 and the candidate that was profiled.
struct Swish {
  profile::Metrics metrics = profile::CollectFromArtifacts(
      profile::ArtifactsIn(kRoot + "/tests/fixtures/h200-advise", "swish"));
  std::optional<roofline::ReferenceAnalysis> stage1;
  std::string code = ReadFile(kRoot + "/problems/swish/candidates/cuda_swish.py");

  Swish() {
    auto analysis = roofline::ReadReferenceAnalysisFile(
        kRoot + "/tests/fixtures/h200-advise/swish.analysis.json");
    EXPECT_TRUE(analysis.ok()) << analysis.status().ToString();
    if (analysis.ok()) stage1 = *analysis;
  }
  // The speedup is test input: the reference's 75.3 us of ncu kernel time (swish.analysis.json)
  // over the candidate's 36.0 us of GPU busy time.
  ProfilingInput Input() const {
    ProfilingInput input(metrics);
    input.stage1 = stage1;
    input.candidate_code = code;
    input.speedup = 2.09;
    return input;
  }
};

using testing::SpyBackend;

std::unique_ptr<SpyBackend> Replay(const std::string& cassette) {
  return testing::ReplayCassette(cassette);
}

// kNone must not reach the model at all.
class MustNotBeCalledBackend : public llm::Backend {
 public:
  std::string provider() const override { return "none"; }
  std::string model() const override { return "none"; }
  llm::Outcome Complete(const llm::Request&) override {
    ADD_FAILURE() << "the profiling agent called the LLM in a mode that must not";
    return llm::MakeError(llm::ErrorKind::kConfig, "must not be called");
  }
};

// Where each of `headings` starts in `text`, asserting each is present.
std::vector<size_t> Positions(const std::string& text, const std::vector<std::string>& headings) {
  std::vector<size_t> at;
  for (const std::string& h : headings) {
    at.push_back(text.find(h));
    EXPECT_NE(at.back(), std::string::npos) << "missing " << h;
  }
  return at;
}

TEST(ProfilingPromptTest, SectionsFollowThePapersOrder) {
  Swish swish;
  std::string prompt = BuildProfilingPrompt(swish.Input(), FeedbackMode::kTools);
  std::vector<size_t> at = Positions(
      prompt, {"## SASS summary", "## Timeline summary", "## Automated Bottleneck Analysis",
               "## ncu metrics by category", "### Compute", "### Memory", "### Occupancy",
               "### Stalls", "## Candidate source", "## Your task"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << prompt;

  // What each section says about this kernel.
  EXPECT_TRUE(
      Contains(prompt, "Stage 1 (roofline of the reference): memory-bound, confidence high"));
  EXPECT_TRUE(Contains(prompt, "reaches 78 % of the attainable bound"));
  EXPECT_TRUE(Contains(prompt, "- Tensor-core instructions: none (WGMMA 0, HMMA 0"));
  EXPECT_TRUE(Contains(prompt, "- Global loads (LDG): 7 (128-bit 1, 64-bit 0, 32-bit 6"));
  EXPECT_TRUE(Contains(prompt, "- Launch overhead: 28.9 % of end to end"));
  EXPECT_TRUE(Contains(prompt, "Stage-1 class: memory-bound. 2 finding(s)"));
  EXPECT_TRUE(Contains(prompt, "(warp_stall)"));
  EXPECT_TRUE(
      Contains(prompt, "- smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct = "));
  // Counters sit in their group: DRAM throughput under memory, not compute.
  size_t dram = prompt.find("- dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_GT(dram, prompt.find("### Memory"));
  EXPECT_LT(dram, prompt.find("### Occupancy"));
}

TEST(ProfilingPromptTest, TheStageOneClassFiltersTheTools) {
  Swish swish;
  // A compute-bound class runs the tensor-core tools that a memory-bound one filters out.
  ProfilingInput input = swish.Input();
  input.stage1->bottleneck = roofline::Bottleneck::kCompute;
  const std::string as_compute = BuildProfilingPrompt(input, FeedbackMode::kTools);
  const std::string as_memory = BuildProfilingPrompt(swish.Input(), FeedbackMode::kTools);
  EXPECT_TRUE(Contains(as_compute, "Stage-1 class: compute-bound"));
  EXPECT_TRUE(Contains(as_compute, "(tensor_core_generation)")) << as_compute;
  EXPECT_FALSE(Contains(as_memory, "(tensor_core_generation)"));
  EXPECT_FALSE(Contains(as_compute, "(fast_math_intrinsics)"));  // memory-only affinity
  EXPECT_TRUE(Contains(as_memory, "(fast_math_intrinsics)"));
}

TEST(ProfilingPromptTest, RawModeHasAboutFiftyCountersAndNothingInterpreted) {
  Swish swish;
  std::string prompt = BuildProfilingPrompt(swish.Input(), FeedbackMode::kRaw);
  std::string system = ProfilingSystemPrompt(FeedbackMode::kRaw);
  EXPECT_EQ(RawCounterNames().size(), 50u);

  std::regex counter(R"(^([a-z0-9_]+__[a-z0-9_.]+)=(-?[0-9.e+]+)$)");
  int counters = 0;
  std::stringstream lines(prompt);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, counter)) continue;
    ++counters;
    EXPECT_NE(std::find(RawCounterNames().begin(), RawCounterNames().end(), m[1].str()),
              RawCounterNames().end())
        << line;
  }
  EXPECT_GE(counters, 45);
  EXPECT_LE(counters, 55);
  EXPECT_TRUE(
      Contains(prompt, "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct=87.07"));
  for (const char* absent : {"Automated Bottleneck Analysis", "Stage", "memory-bound", "roofline",
                             "SASS", "Timeline", "warp_stall", "Recommendations"}) {
    EXPECT_FALSE(Contains(prompt, absent)) << "raw prompt mentions " << absent;
    EXPECT_FALSE(Contains(system, absent)) << "raw system prompt mentions " << absent;
  }
}

TEST(ProfilingGoldenTest, EachModesPromptReadsAsReviewed) {
  const bool update = std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr;
  Swish swish;
  for (FeedbackMode mode :
       {FeedbackMode::kTools, FeedbackMode::kReactive, FeedbackMode::kRaw, FeedbackMode::kNone}) {
    std::string system = ProfilingSystemPrompt(mode);
    std::string user = BuildProfilingPrompt(swish.Input(), mode);
    std::string text = system.empty() && user.empty()
                           ? ""
                           : "=== system ===\n" + system + "\n\n=== user ===\n" + user;
    EXPECT_EQ(user, BuildProfilingPrompt(swish.Input(), mode)) << "not deterministic";
    std::string golden = kRoot + "/tests/golden/profiling/" + ToString(mode) + ".md";
    if (update) {
      std::filesystem::create_directories(kRoot + "/tests/golden/profiling");
      std::ofstream(golden) << text;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(golden))
        << golden << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
    EXPECT_EQ(text, ReadFile(golden))
        << "the " << ToString(mode) << " prompt changed; review, then regenerate";
  }
}

TEST(ProfilingAgentTest, ToolsModeReturnsTheAnalysisFollowedByTheToolsGuidance) {
  Swish swish;
  auto backend = Replay("profiling_analysis.jsonl");
  ProfilingResult r = RunProfilingAgent(*backend, swish.Input());

  EXPECT_FALSE(r.error) << r.error->ToString();
  ASSERT_TRUE(r.analysis);
  EXPECT_EQ(r.analysis->bottleneck.rfind("memory", 0), 0u);
  EXPECT_EQ(r.analysis->severity, "high");
  ASSERT_EQ(r.analysis->recommendations.size(), 2u);
  EXPECT_EQ(r.usage.input_tokens, 5200);

  // The programmer reads the analysis first, then the tools' findings it was built on.
  std::vector<size_t> at = Positions(
      r.feedback, {"## Profiling analysis", "1. Unroll the grid-stride loop",
                   "2. Replace v / (1.0f + __expf(-v))", "## Automated Bottleneck Analysis",
                   "(warp_stall)", "(fast_math_intrinsics)"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << r.feedback;

  // What was sent: the mode's prompts, the analysis schema, and no functions.
  std::vector<llm::Request> sent = backend->requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].system, ProfilingSystemPrompt(FeedbackMode::kTools));
  EXPECT_EQ(sent[0].messages[0].text, BuildProfilingPrompt(swish.Input(), FeedbackMode::kTools));
  ASSERT_TRUE(sent[0].response_schema);
  EXPECT_EQ(sent[0].response_schema->schema, ProfileAnalysisSchema());
  EXPECT_TRUE(sent[0].tools.empty());
}

TEST(ProfilingAgentTest, MalformedAnalysisFallsBackToTheToolsGuidance) {
  Swish swish;
  auto backend = Replay("profiling_malformed_analysis.jsonl");
  ProfilingResult r = RunProfilingAgent(*backend, swish.Input());

  EXPECT_FALSE(r.analysis);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, llm::ErrorKind::kMalformed);
  EXPECT_TRUE(Contains(r.error->message, "no bottleneck")) << r.error->message;
  // The run continues with what the tools found.
  EXPECT_TRUE(Contains(r.feedback, "## Automated Bottleneck Analysis"));
  EXPECT_TRUE(Contains(r.feedback, "(warp_stall)"));
  EXPECT_FALSE(Contains(r.feedback, "## Profiling analysis"));
}

TEST(ProfilingAgentTest, LlmFailureInRawModeStillHandsOnTheCounters) {
  Swish swish;
  llm::testing::ScriptedBackend backend;
  backend.Push(llm::MakeError(llm::ErrorKind::kServer, "overloaded", 529));
  ProfilingOptions options;
  options.mode = FeedbackMode::kRaw;
  ProfilingResult r = RunProfilingAgent(backend, swish.Input(), options);

  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, llm::ErrorKind::kServer);
  EXPECT_TRUE(Contains(r.feedback, "## ncu counters"));
  EXPECT_TRUE(Contains(r.feedback, "dram__bytes_read.sum=67119104"));
  EXPECT_FALSE(Contains(r.feedback, "Automated Bottleneck Analysis"));
}

TEST(ProfilingAgentTest, ReactiveModeOffersTheToolsAndRecordsWhatTheModelCalled) {
  Swish swish;
  auto backend = Replay("profiling_reactive.jsonl");
  ProfilingOptions options;
  options.mode = FeedbackMode::kReactive;
  ProfilingResult r = RunProfilingAgent(*backend, swish.Input(), options);

  EXPECT_FALSE(r.error) << r.error->ToString();
  ASSERT_TRUE(r.analysis);
  EXPECT_EQ(r.tool_calls, (std::vector<std::string>{"warp_stall", "dram_bandwidth", "warp_stall"}));
  EXPECT_EQ(r.usage.input_tokens, 4100 + 5900 + 6000);

  // The tools relevant to a memory-bound problem are offered; the filtered ones are not.
  auto offered = [&](const std::string& name) {
    return std::find(r.tools_offered.begin(), r.tools_offered.end(), name) != r.tools_offered.end();
  };
  EXPECT_TRUE(offered("warp_stall"));
  EXPECT_TRUE(offered("fast_math_intrinsics"));
  EXPECT_FALSE(offered("tensor_core_underutilization"));
  EXPECT_FALSE(offered("tensor_core_generation"));

  std::vector<llm::Request> sent = backend->requests();
  ASSERT_EQ(sent.size(), 3u);
  // No guidance is injected: the model has only the functions.
  EXPECT_FALSE(Contains(sent[0].messages[0].text, "Automated Bottleneck Analysis"));
  EXPECT_TRUE(Contains(sent[0].messages[0].text, "## SASS summary"));
  EXPECT_EQ(sent[0].tools.size(), r.tools_offered.size());
  // The second turn carries the two tools' results: a finding, and a tool that found nothing.
  const std::vector<llm::Message>& turn2 = sent[1].messages;
  ASSERT_EQ(turn2.size(), 4u);
  ASSERT_TRUE(turn2[2].tool_result && turn2[3].tool_result);
  EXPECT_TRUE(
      Contains(turn2[2].tool_result->content, "[CRITICAL] Warps wait on streamed global loads"))
      << turn2[2].tool_result->content;
  EXPECT_TRUE(Contains(turn2[3].tool_result->content,
                       "dram_bandwidth ran on this kernel's metrics "
                       "and found nothing"));
  // The repeated call was over its budget of one; the model is told so.
  const llm::Message& refused = sent[2].messages.back();
  ASSERT_TRUE(refused.tool_result);
  EXPECT_TRUE(refused.tool_result->is_error);
  EXPECT_TRUE(Contains(refused.tool_result->content, "budget")) << refused.tool_result->content;

  // The programmer gets the analysis and the findings of the tools that were called, and not
  // those of fast_math_intrinsics, which the proactive mode would have run.
  EXPECT_TRUE(Contains(r.feedback, "## Profiling analysis"));
  EXPECT_TRUE(Contains(r.feedback, "(warp_stall)"));
  EXPECT_FALSE(Contains(r.feedback, "fast_math_intrinsics"));
}

TEST(ProfilingAgentTest, NoneModeMakesNoLlmCallAndGivesNoFeedback) {
  Swish swish;
  MustNotBeCalledBackend backend;
  ProfilingOptions options;
  options.mode = FeedbackMode::kNone;
  ProfilingResult r = RunProfilingAgent(backend, swish.Input(), options);

  EXPECT_FALSE(r.llm_called);
  EXPECT_TRUE(r.feedback.empty());
  EXPECT_TRUE(r.prompt.empty());
  EXPECT_FALSE(r.error);
  EXPECT_FALSE(r.analysis);
}

TEST(ProfilingAgentTest, WithoutStageOneEveryToolRunsAndNoClassIsClaimed) {
  Swish swish;
  ProfilingInput input = swish.Input();
  input.stage1.reset();
  std::string prompt = BuildProfilingPrompt(input, FeedbackMode::kTools);
  EXPECT_FALSE(Contains(prompt, "Stage 1"));
  EXPECT_FALSE(Contains(prompt, "Stage-1 class"));
  EXPECT_TRUE(Contains(prompt, "## Automated Bottleneck Analysis"));
}

TEST(ProfilingAgentTest, MissingViewsAreSaidPlainly) {
  profile::Metrics empty;
  ProfilingInput input(empty);
  std::string prompt = BuildProfilingPrompt(input, FeedbackMode::kTools);
  EXPECT_TRUE(Contains(prompt, "Speedup over the reference: not measured."));
  EXPECT_TRUE(Contains(prompt, "## SASS summary\n\nNot collected"));
  EXPECT_TRUE(Contains(prompt, "## Timeline summary\n\nNot collected"));
  EXPECT_TRUE(Contains(prompt, "## ncu metrics by category\n\nNot collected"));
  EXPECT_FALSE(Contains(prompt, "## Candidate source"));
}

TEST(ProfilingAgentTest, AnalysisRendersForTheProgrammer) {
  ProfileAnalysis a;
  a.bottleneck = "memory";
  a.severity = "high";
  a.summary = "DRAM latency is exposed.";
  a.recommendations = {{1, "Use float4 loads.", "16 B per request"}, {2, "Unroll by 4.", ""}};
  EXPECT_EQ(RenderProfileAnalysis(a),
            "## Profiling analysis\n\n"
            "Bottleneck: memory (severity high)\n"
            "DRAM latency is exposed.\n\n"
            "Recommendations, most valuable first:\n"
            "1. Use float4 loads.\n"
            "   Why: 16 B per request\n"
            "2. Unroll by 4.\n");
}

}  // namespace agents_profiling_agent_test
}  // namespace kernelpro::agents
