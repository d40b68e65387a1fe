// The programmer agent against replies a model really gives: good JSON, free text with fenced
// blocks, broken candidates, too few candidates, and a reply cut off at the token limit that the
// LLM layer recovers. Each reply is a replay cassette (tests/fixtures/cassettes/README.md); the
// tests check what the search would see: which candidates survive, which are rejected and why.
#include "agents/programmer.h"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "agents/agent_testing.h"
#include "llm/cassette.h"
#include "llm/recovery.h"
#include "llm/scripted_backend_testing.h"

namespace kernelpro::agents {
namespace {


using testing::SpyBackend;

std::unique_ptr<SpyBackend> Replay(const std::string& cassette) {
  return testing::ReplayCassette(cassette);
}

Prompt SwishPrompt() {
  Prompt p;
  p.system = "You write CUDA kernels for PyTorch models.";
  p.user = "Optimise this model:\n```python\nclass Model(nn.Module): ...\n```";
  return p;
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(ProgrammerTest, TwoGoodCandidatesArriveWithTheirStrategies) {
  auto backend = Replay("programmer_two_candidates.jsonl");
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt());

  EXPECT_FALSE(r.error) << r.error->ToString();
  EXPECT_EQ(r.asked, 2);
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[0].strategy,
            "float4 loads and stores in a grid-stride loop sized to one full wave");
  EXPECT_EQ(r.candidates[1].strategy,
            "one element per thread with __ldg and __fdividef instead of IEEE division");
  EXPECT_TRUE(Contains(r.candidates[0].code, "class ModelNew(nn.Module):"));
  EXPECT_TRUE(Contains(r.candidates[1].code, "__fdividef"));
  EXPECT_TRUE(r.rejected.empty());
  EXPECT_FALSE(r.from_fenced_blocks);
  EXPECT_EQ(r.usage.input_tokens, 2900);
  EXPECT_EQ(r.usage.output_tokens, 1800);

  // One request: the prompt, a request for two candidates, and the schema they must follow.
  std::vector<llm::Request> sent = backend->requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].system, SwishPrompt().system);
  ASSERT_EQ(sent[0].messages.size(), 1u);
  EXPECT_EQ(sent[0].messages[0].text.rfind(SwishPrompt().user, 0), 0u);
  EXPECT_TRUE(Contains(sent[0].messages[0].text, "Propose 2 candidates"));
  EXPECT_EQ(sent[0].max_tokens, 16384);
  ASSERT_TRUE(sent[0].response_schema);
  EXPECT_EQ(sent[0].response_schema->schema, CandidatesSchema());
}

TEST(ProgrammerTest, ReplyWithoutJsonFallsBackToFencedPythonBlocks) {
  auto backend = Replay("programmer_fenced_fallback.jsonl");
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt());

  EXPECT_FALSE(r.error);
  EXPECT_TRUE(r.from_fenced_blocks);
  ASSERT_EQ(r.candidates.size(), 2u);
  // Each block is named by the line before it, without its markdown and label.
  EXPECT_EQ(r.candidates[0].strategy, "float4 vectorised grid-stride loop");
  EXPECT_EQ(r.candidates[1].strategy, "fast-math division with read-only loads");
  EXPECT_TRUE(Contains(r.candidates[0].code, "float4 v = x4[i];"));
  EXPECT_EQ(r.candidates[0].code.find("```"), std::string::npos);
}

TEST(ProgrammerTest, ReplyWithNothingUsableIsAnErrorValueNotACrash) {
  auto backend = Replay("programmer_no_candidates.jsonl");
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt());

  EXPECT_TRUE(r.candidates.empty());
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, llm::ErrorKind::kMalformed);
  EXPECT_TRUE(Contains(r.error->message, "no candidate")) << r.error->message;
  // The reply is kept for the run log.
  EXPECT_TRUE(Contains(r.raw_text, "I would keep the PyTorch version"));
}

TEST(ProgrammerTest, CandidateWithoutModelNewIsRejectedAndTheOtherKept) {
  auto backend = Replay("programmer_missing_model_new.jsonl");
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt());

  EXPECT_FALSE(r.error);
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_TRUE(Contains(r.candidates[0].strategy, "float4"));
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].strategy, "the fast-math kernel, keeping the reference's class name");
  EXPECT_TRUE(Contains(r.rejected[0].reason, "no class ModelNew")) << r.rejected[0].reason;
  EXPECT_TRUE(Contains(r.rejected[0].code, "class Model(nn.Module):"));
}

TEST(ProgrammerTest, SyntaxErrorIsRejectedWithItsLine) {
  auto backend = Replay("programmer_syntax_error.jsonl");
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt());

  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_TRUE(Contains(r.candidates[0].strategy, "float4"));
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_TRUE(Contains(r.rejected[0].reason, "Python syntax error at line 38"))
      << r.rejected[0].reason;
  CandidateCheck check = CheckCandidateSource(r.rejected[0].code);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.syntax_error_line, 38);
}

TEST(ProgrammerTest, DuplicatesAndTorchOnlyCandidatesAreDroppedWithReasons) {
  auto backend = Replay("programmer_duplicates_and_torch_only.jsonl");
  ProgrammerOptions options;
  options.num_candidates = 3;
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt(), options);

  ASSERT_EQ(r.candidates.size(), 1u);
  ASSERT_EQ(r.rejected.size(), 2u);
  EXPECT_EQ(r.rejected[0].reason, "duplicate of candidate 1 (same code)");
  EXPECT_TRUE(Contains(r.rejected[1].reason, "no CUDA kernel source")) << r.rejected[1].reason;
  EXPECT_FALSE(r.error);
}

TEST(ProgrammerTest, FewerCandidatesThanAskedIsAnOrdinaryResult) {
  auto backend = Replay("programmer_fewer_candidates.jsonl");
  ProgrammerOptions options;
  options.num_candidates = 3;
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt(), options);

  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.asked, 3);
  EXPECT_EQ(r.candidates.size(), 1u);
  EXPECT_TRUE(r.rejected.empty());
  EXPECT_TRUE(Contains(backend->requests()[0].messages[0].text, "Propose 3 candidates"));
}

TEST(ProgrammerTest, CandidatesBeyondTheNumberAskedForAreNotBuilt) {
  auto backend = Replay("programmer_two_candidates.jsonl");
  ProgrammerOptions options;
  options.num_candidates = 1;
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt(), options);

  ASSERT_EQ(r.candidates.size(), 1u);
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].reason, "beyond the 1 candidate(s) asked for");
  EXPECT_TRUE(Contains(backend->requests()[0].messages[0].text, "Propose one candidate."));
}

TEST(ProgrammerTest, TruncatedReplyIsRecoveredByTheLlmLayer) {
  auto spy = Replay("programmer_truncated_then_complete.jsonl");
  SpyBackend* requests = spy.get();
  std::unique_ptr<llm::Backend> backend = llm::MakeTruncationRecoveringBackend(std::move(spy));
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt());

  EXPECT_FALSE(r.error);
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_TRUE(r.notes.empty());  // the answer the agent saw was whole
  // The first reply stopped at 16384 tokens; recovery asked again with twice the budget.
  std::vector<llm::Request> sent = requests->requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].max_tokens, 16384);
  EXPECT_EQ(sent[1].max_tokens, 32768);
  // The discarded reply's tokens are still counted.
  EXPECT_EQ(r.usage.output_tokens, 16384 + 2100);
  EXPECT_EQ(r.usage.input_tokens, 2 * 2900);
}

TEST(ProgrammerTest, TruncatedReplyWithoutRecoveryKeepsNoHalfCandidate) {
  auto backend = Replay("programmer_truncated_then_complete.jsonl");
  ProgrammerResult r = RunProgrammer(*backend, SwishPrompt());

  EXPECT_TRUE(r.candidates.empty());
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, llm::ErrorKind::kTruncated);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(Contains(r.notes[0], "cut off at the token limit"));
}

TEST(ProgrammerTest, AProseReplyRejectedByTheLlmLayerStillYieldsItsFencedCandidates) {
  // A live backend without native JSON output turns a reply with no JSON into kMalformed, with
  // the reply's text kept: the candidates in its fenced blocks are not lost.
  llm::testing::ScriptedBackend backend;
  const std::string code =
      "import torch\nfrom torch.utils.cpp_extension import load_inline\n"
      "src = '__global__ void k(float* y) { y[0] = 1.0f; }'\n"
      "class ModelNew(torch.nn.Module):\n    pass\n";
  llm::Error prose = llm::MakeError(llm::ErrorKind::kMalformed, "openai: no JSON value");
  prose.reply_text = "Here is my idea, one kernel per element:\n```python\n" + code + "```\n";
  backend.Push(prose);
  ProgrammerResult r = RunProgrammer(backend, SwishPrompt());
  EXPECT_FALSE(r.error) << r.error->ToString();
  EXPECT_TRUE(r.from_fenced_blocks);
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].code, code);
}

TEST(ProgrammerTest, APromptWithItsOwnAnswerFormatIsSentAsItIs) {
  llm::testing::ScriptedBackend backend;
  backend.Push(llm::testing::TextResponse("{\"candidates\": []}"));
  backend.Push(llm::testing::TextResponse("{\"candidates\": []}"));
  Prompt built = SwishPrompt();
  built.sections = {"base_strategies", "output_contract", "mode_initial"};
  RunProgrammer(backend, built);
  RunProgrammer(backend, SwishPrompt());
  auto requests = backend.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].messages[0].text, built.user) << "no second answer format";
  EXPECT_TRUE(Contains(requests[1].messages[0].text, "## Answer format"));
}

TEST(ProgrammerTest, LlmFailureIsReportedAndNothingIsChecked) {
  llm::testing::ScriptedBackend backend;
  backend.Push(llm::testing::ErrorWithRetryAfter(llm::ErrorKind::kRateLimited, 429, 30));
  ProgrammerResult r = RunProgrammer(backend, SwishPrompt());

  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, llm::ErrorKind::kRateLimited);
  EXPECT_TRUE(r.candidates.empty());
  EXPECT_TRUE(r.rejected.empty());
}

TEST(ProgrammerTest, CodeWrappedInAFenceInsideTheJsonIsUnwrapped) {
  llm::testing::ScriptedBackend backend;
  const std::string code =
      "import torch\nfrom torch.utils.cpp_extension import load_inline\n"
      "src = '__global__ void k(float* y) { y[0] = 1.0f; }'\n"
      "class ModelNew(torch.nn.Module):\n    pass\n";
  Json reply = {{"candidates", {{{"strategy", "fenced"}, {"code", "```python\n" + code + "```"}}}}};
  backend.Push(llm::testing::TextResponse(DumpJson(reply)));
  ProgrammerResult r = RunProgrammer(backend, SwishPrompt());

  ASSERT_EQ(r.candidates.size(), 1u) << (r.rejected.empty() ? "" : r.rejected[0].reason);
  EXPECT_EQ(r.candidates[0].code, code);
}

// ---- The cheap check on its own --------------------------------------------------------------

const char* kCpuCandidate = R"(import torch
from torch.utils.cpp_extension import load_inline
_ext = load_inline(name="swish_cpu", cpp_sources="torch::Tensor f(torch::Tensor x) { return x; }",
                   functions=["f"])
class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _ext.f(x)
)";

// A reply with one candidate whose kernel is named after `tag`.
llm::Response OneCandidate(const std::string& strategy, const std::string& tag) {
  const std::string code =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
      "_CU = '__global__ void k_" +
      tag +
      "(float* y) {}'\n"
      "_ext = load_inline(name='x', cpp_sources='', cuda_sources=_CU, functions=[])\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n";
  return llm::testing::TextResponse(
      DumpJson(Json{{"candidates", Json::array({{{"strategy", strategy}, {"code", code}}})}}),
      llm::Usage{10, 5});
}

TEST(ProgrammerTest, SeveralTemperaturesAskOncePerCandidateEachAtItsOwn) {
  llm::testing::ScriptedBackend backend;
  backend.Push(OneCandidate("cool", "a"));
  backend.Push(OneCandidate("warm", "b"));
  backend.Push(OneCandidate("cool again", "a"));
  ProgrammerOptions options;
  options.num_candidates = 3;
  ProgrammerResult r = RunProgrammerAtTemperatures(backend, SwishPrompt(), options, {0.2, 0.7});

  const std::vector<llm::Request> sent = backend.Requests();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].temperature, 0.2);
  EXPECT_EQ(sent[1].temperature, 0.7);
  EXPECT_EQ(sent[2].temperature, 0.2) << "the temperatures repeat over the candidates";
  EXPECT_TRUE(Contains(sent[0].messages[0].text, "Propose one candidate."))
      << sent[0].messages[0].text;
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[0].strategy, "cool");
  EXPECT_EQ(r.candidates[1].strategy, "warm");
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].reason, "duplicate of candidate 1 (same code)");
  EXPECT_EQ(r.usage.input_tokens, 30);
  EXPECT_FALSE(r.error);
}

TEST(ProgrammerTest, OneTemperatureIsOneRequestAtThatTemperature) {
  llm::testing::ScriptedBackend backend;
  backend.Push(OneCandidate("only", "a"));
  ProgrammerResult r = RunProgrammerAtTemperatures(backend, SwishPrompt(), {}, {0.45});
  ASSERT_EQ(backend.Requests().size(), 1u);
  EXPECT_EQ(backend.Requests()[0].temperature, 0.45);
  EXPECT_EQ(r.candidates.size(), 1u);
}

TEST(CandidateCheckTest, CpuCandidatesNeedCppSourceAndCudaCandidatesCudaSource) {
  CheckOptions cpu;
  cpu.device = "cpu";
  EXPECT_TRUE(CheckCandidateSource(kCpuCandidate, cpu).ok);
  CandidateCheck as_cuda = CheckCandidateSource(kCpuCandidate);  // device cuda by default
  EXPECT_FALSE(as_cuda.ok);
  EXPECT_TRUE(Contains(as_cuda.reason, "no CUDA kernel source")) << as_cuda.reason;
}

TEST(CandidateCheckTest, WithoutAPythonTheSyntaxCheckIsSkippedNotHeldAgainstTheCandidate) {
  CheckOptions options;
  options.python = "/nonexistent/python3";
  options.device = "cpu";
  CandidateCheck check = CheckCandidateSource(kCpuCandidate, options);
  EXPECT_TRUE(check.ok) << check.reason;
  ASSERT_EQ(check.notes.size(), 1u);
  EXPECT_TRUE(Contains(check.notes[0], "syntax check skipped")) << check.notes[0];
  // ModelNew is still looked for, in the text.
  std::string renamed = kCpuCandidate;
  renamed.replace(renamed.find("ModelNew"), 8, "Model");
  EXPECT_FALSE(CheckCandidateSource(renamed, options).ok);
}

TEST(CandidateCheckTest, EmptyCodeIsRejected) {
  CandidateCheck check = CheckCandidateSource("  \n");
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.reason, "empty code");
}

}  // namespace
}  // namespace kernelpro::agents
