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
#include "agents/cutlass_tools.h"
#include "llm/anthropic.h"
#include "llm/cassette.h"
#include "llm/fake_server_testing.h"
#include "llm/http.h"
#include "llm/openai.h"
#include "llm/recovery.h"
#include "llm/scripted_backend_testing.h"

namespace kernelpro::agents {
namespace agents_programmer_test {

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

// ---- tools: the programmer looks things up in CUTLASS before it answers (issue 18). The model
// is a real HTTP server speaking each provider's protocol (llm/fake_server_testing.h).

// A CUDA candidate that includes CuTe, as a Python file. `flags` go to extra_cuda_cflags.
std::string CuteCandidate(const std::string& flags) {
  return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
         "_CU = r'''\n#include <cute/tensor.hpp>\n"
         "using Atom = cute::SM90_64x128x16_F32BF16BF16_SS;\n"
         "__global__ void k(float* y) {}\ntorch::Tensor f(torch::Tensor x) { return x; }\n'''\n"
         "_ext = load_inline(name='g', cpp_sources='torch::Tensor f(torch::Tensor x);',\n"
         "                   cuda_sources=_CU, functions=['f'], extra_cuda_cflags=[" +
         flags +
         "])\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
         "        return _ext.f(x)\n";
}

std::string CandidatesJson(const std::string& strategy, const std::string& code) {
  return DumpJson(Json{{"candidates", Json::array({{{"strategy", strategy}, {"code", code}}})}});
}

std::unique_ptr<CutlassKit> FixtureKit() {
  auto tree = cutlass::CutlassTreeAt(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/cutlass_tree", "test");
  EXPECT_TRUE(tree.ok());
  auto kit = CutlassKit::Load(*tree);
  EXPECT_TRUE(kit.ok()) << kit.status().ToString();
  return std::move(*kit);
}

Json OpenAiReply(const Json& message, const std::string& finish_reason) {
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "gpt-test"},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish_reason}}}},
          {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 10}}}};
}

Json OpenAiToolCall(const std::string& id, const std::string& name, const Json& arguments) {
  return {{"id", id},
          {"type", "function"},
          {"function", {{"name", name}, {"arguments", arguments.dump()}}}};
}

std::unique_ptr<llm::Backend> OpenAiAt(const llm::testing::FakeServer& server) {
  llm::OpenAiOptions options;
  options.base_url = server.BaseUrl() + "/v1";
  options.model = "gpt-test";
  options.api_key = "sk-test";
  return llm::MakeOpenAiBackend(options, llm::MakeCurlTransport());
}

// One candidate asked for, with the fixture tree's tools offered.
ProgrammerResult RunWithCutlassTools(llm::Backend& backend) {
  auto kit = FixtureKit();
  ProgrammerTools tools = kit->ForIteration();
  ProgrammerOptions programmer;
  programmer.num_candidates = 1;
  programmer.tools = &tools;
  return RunProgrammer(backend, SwishPrompt(), programmer);
}

TEST(ProgrammerToolsTest, OverOpenAiTheModelSearchesReadsThenAnswersAndEveryCallIsKept) {
  llm::testing::FakeServer server;
  server.ReplyJson(OpenAiReply(
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {OpenAiToolCall("c1", "search_cutlass", {{"regex", "SM90_64x\\d+x16_F32BF16BF16_SS"}})}}},
      "tool_calls"));
  server.ReplyJson(OpenAiReply(
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {OpenAiToolCall("c2", "read_cutlass_file",
                        {{"file", "cute/atom/mma_atom.hpp"}, {"start_line", 1}, {"end_line", 10}}),
         OpenAiToolCall("c3", "read_cutlass_file", {{"file", "cute/nope.hpp"}})}}},
      "tool_calls"));
  server.ReplyJson(
      OpenAiReply({{"role", "assistant"},
                   {"content", CandidatesJson("one GMMA tile per warpgroup", CuteCandidate(""))}},
                  "stop"));
  auto backend = OpenAiAt(server);

  ProgrammerResult r = RunWithCutlassTools(*backend);

  ASSERT_FALSE(r.error) << r.error->ToString();
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].strategy, "one GMMA tile per warpgroup");
  EXPECT_TRUE(r.tools_offered);
  ASSERT_EQ(r.tool_calls.size(), 3u);
  EXPECT_EQ(r.tool_calls[0].name, "search_cutlass");
  EXPECT_TRUE(Contains(r.tool_calls[0].result, "cute/atom/mma_atom.hpp:6:"))
      << r.tool_calls[0].result;
  EXPECT_EQ(r.tool_calls[1].arguments["file"], "cute/atom/mma_atom.hpp");
  EXPECT_FALSE(r.tool_calls[1].is_error);
  EXPECT_TRUE(r.tool_calls[2].is_error);  // no such file: told to the model, not the end
  EXPECT_EQ(r.usage.input_tokens, 300);   // three turns
  EXPECT_EQ(r.usage.output_tokens, 30);

  // On the wire: the four tools on every turn, the budget in the first user message, each
  // result sent back under its call's id.
  auto got = server.Received();
  ASSERT_EQ(got.size(), 3u);
  Json first = got[0].JsonBody();
  ASSERT_EQ(first["tools"].size(), 4u);
  EXPECT_EQ(first["tools"][3]["function"]["name"], "check_smem_layout");
  const std::string asked = first["messages"].back()["content"].get<std::string>();
  EXPECT_TRUE(Contains(asked, "At most 6 searches in this iteration")) << asked;
  Json second = got[1].JsonBody();
  EXPECT_EQ(second["messages"].back()["role"], "tool");
  EXPECT_EQ(second["messages"].back()["tool_call_id"], "c1");
  EXPECT_TRUE(Contains(second["messages"].back()["content"].get<std::string>(),
                       "SM90_64x128x16_F32BF16BF16_SS"));
}

TEST(ProgrammerToolsTest, OverAnthropicToolUseBlocksRunTheSameTools) {
  llm::testing::FakeServer server;
  auto reply = [](const Json& content, const std::string& stop) {
    return Json{{"id", "msg_1"},
                {"type", "message"},
                {"role", "assistant"},
                {"model", "claude-t"},
                {"content", content},
                {"stop_reason", stop},
                {"stop_sequence", nullptr},
                {"usage", {{"input_tokens", 50}, {"output_tokens", 5}}}};
  };
  server.ReplyJson(reply({{{"type", "tool_use"},
                           {"id", "toolu_1"},
                           {"name", "list_cutlass_directory"},
                           {"input", {{"dir", "cute/atom"}}}}},
                         "tool_use"));
  server.ReplyJson(reply(
      {{{"type", "text"}, {"text", CandidatesJson("cute atoms", CuteCandidate(""))}}}, "end_turn"));
  llm::AnthropicOptions options;
  options.base_url = server.BaseUrl();
  options.model = "claude-t";
  options.api_key = "sk-ant-test";
  auto backend = llm::MakeAnthropicBackend(options, llm::MakeCurlTransport());
  ProgrammerResult r = RunWithCutlassTools(*backend);
  ASSERT_FALSE(r.error) << r.error->ToString();
  ASSERT_EQ(r.candidates.size(), 1u);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_TRUE(Contains(r.tool_calls[0].result, "mma_atom.hpp")) << r.tool_calls[0].result;
  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  Json result_block = got[1].JsonBody()["messages"].back()["content"][0];
  EXPECT_EQ(result_block["type"], "tool_result");
  EXPECT_EQ(result_block["tool_use_id"], "toolu_1");
}

TEST(ProgrammerToolsTest, ABackendThatRefusesToolsGetsOneCallWithoutThemAndTheResultSaysSo) {
  llm::testing::FakeServer server;
  server.ReplyJson(Json{{"error", {{"message", "tools are not supported by this model"}}}}, 400);
  server.ReplyJson(OpenAiReply(
      {{"role", "assistant"}, {"content", CandidatesJson("plain", CuteCandidate(""))}}, "stop"));
  auto backend = OpenAiAt(server);
  ProgrammerResult r = RunWithCutlassTools(*backend);
  ASSERT_FALSE(r.error) << r.error->ToString();
  EXPECT_EQ(r.candidates.size(), 1u);
  EXPECT_FALSE(r.tools_offered);
  EXPECT_TRUE(r.tool_calls.empty());
  ASSERT_FALSE(r.notes.empty());
  EXPECT_TRUE(Contains(r.notes.back(), "refused the request with tools")) << r.notes.back();
  EXPECT_TRUE(Contains(r.notes.back(), "without them"));
  EXPECT_EQ(r.tools_refused, r.notes.back());
  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].JsonBody().contains("tools"));
  EXPECT_FALSE(got[1].JsonBody().contains("tools"));
  EXPECT_FALSE(Contains(got[1].JsonBody()["messages"].back()["content"].get<std::string>(),
                        "Tools for this answer"));
}

TEST(ProgrammerToolsTest, APreBuildCheckRejectsACandidateWithItsFindings) {
  llm::testing::ScriptedBackend backend;
  const std::string broken = CuteCandidate("'-gencode=arch=compute_90,code=sm_90'");
  const std::string good = CuteCandidate("");
  backend.Push(llm::testing::TextResponse(DumpJson(
      Json{{"candidates", Json::array({{{"strategy", "sm_90 flags"}, {"code", broken}},
                                       {{"strategy", "build adds sm_90a"}, {"code", good}}})}})));
  auto kit = FixtureKit();
  ProgrammerOptions programmer;
  programmer.pre_build_check = [&kit](const std::string& code) { return kit->Validate(code); };
  ProgrammerResult r = RunProgrammer(backend, SwishPrompt(), programmer);
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].strategy, "build adds sm_90a");
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_TRUE(Contains(r.rejected[0].reason, "[build.sm90a]")) << r.rejected[0].reason;
  EXPECT_TRUE(Contains(r.rejected[0].reason, "no build was spent"));
}

}  // namespace agents_programmer_test
}  // namespace kernelpro::agents
