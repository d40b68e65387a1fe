// The Anthropic backend against an in-process server speaking the Messages API over real
// sockets: what goes on the wire (golden bodies, headers, tool results merged into one user
// turn), how replies and failures come back, and prompt-enforced structured output.
#include "llm/anthropic.h"

#include <gtest/gtest.h>

#include "llm/backend_testing.h"
#include "llm/fake_server_testing.h"

namespace kernelpro::llm {
namespace llm_anthropic_test {

using testing::FakeServer;
using testing::ScriptedReply;

AnthropicOptions OptionsFor(const FakeServer& server) {
  AnthropicOptions options;
  options.base_url = server.BaseUrl();
  options.model = "claude-test";
  options.api_key = "sk-ant-test";
  return options;
}

Json MessagesReply(const Json& content, const std::string& stop_reason) {
  return {{"id", "msg_1"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", "claude-test-20250101"},
          {"content", content},
          {"stop_reason", stop_reason},
          {"stop_sequence", nullptr},
          {"usage", {{"input_tokens", 210}, {"output_tokens", 42}}}};
}

Json TextReply(const std::string& text, const std::string& stop_reason = "end_turn") {
  return MessagesReply({{{"type", "text"}, {"text", text}}}, stop_reason);
}

TEST(AnthropicBackendTest, PlainAnswerWithTokensModelAndHeaders) {
  FakeServer server;
  server.ReplyJson(TextReply("Each element is read once: DRAM bandwidth bounds it."));
  auto backend = MakeAnthropicBackend(OptionsFor(server), MakeCurlTransport());
  EXPECT_EQ(backend->provider(), "anthropic");
  EXPECT_EQ(backend->model(), "claude-test");

  Outcome out = backend->Complete(testing::PlainRequest());
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  const Response& r = out.response();
  EXPECT_EQ(r.text, "Each element is read once: DRAM bandwidth bounds it.");
  EXPECT_EQ(r.stop_reason, FinishReason::kEnd);
  EXPECT_EQ(r.provider_stop_reason, "end_turn");
  EXPECT_EQ(r.usage.input_tokens, 210);
  EXPECT_EQ(r.usage.output_tokens, 42);
  EXPECT_EQ(r.model, "claude-test-20250101");
  EXPECT_GT(r.latency_ms, 0);

  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "POST");
  EXPECT_EQ(got[0].path, "/v1/messages");
  EXPECT_EQ(got[0].Header("x-api-key"), "sk-ant-test");
  EXPECT_EQ(got[0].Header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(got[0].Header("content-type"), "application/json");
  EXPECT_EQ(got[0].Header("Authorization"), "");
  EXPECT_EQ(got[0].JsonBody(), AnthropicRequestBody(testing::PlainRequest(), "claude-test"));
}

TEST(AnthropicBackendTest, NoKeyHeaderWithoutAKeyAndTheConfiguredVersion) {
  FakeServer server;
  server.ReplyJson(TextReply("hi"));
  AnthropicOptions options = OptionsFor(server);
  options.api_key.clear();
  options.version = "2099-01-01";
  ASSERT_TRUE(MakeAnthropicBackend(options, nullptr)->Complete(testing::PlainRequest()).ok());
  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].Header("x-api-key"), "");
  EXPECT_EQ(got[0].Header("anthropic-version"), "2099-01-01");
}

TEST(AnthropicBackendTest, ToolCallRoundTripMergesResultsIntoOneUserTurn) {
  FakeServer server;
  server.ReplyJson(MessagesReply({{{"type", "text"}, {"text", "I will read both."}},
                                  {{"type", "tool_use"},
                                   {"id", "toolu_1"},
                                   {"name", "read_file"},
                                   {"input", {{"path", "swish.cu"}}}},
                                  {{"type", "tool_use"},
                                   {"id", "toolu_2"},
                                   {"name", "read_file"},
                                   {"input", {{"path", "missing.cu"}}}}},
                                 "tool_use"));
  server.ReplyJson(TextReply("Use float4 loads."));
  auto backend = MakeAnthropicBackend(OptionsFor(server), MakeCurlTransport());

  Request request = testing::PlainRequest();
  request.tools = {testing::ReadFileTool()};
  Outcome first = backend->Complete(request);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  const Response& asked = first.response();
  EXPECT_EQ(asked.stop_reason, FinishReason::kToolUse);
  EXPECT_EQ(asked.text, "I will read both.");
  ASSERT_EQ(asked.tool_calls.size(), 2u);
  EXPECT_EQ(asked.tool_calls[0].id, "toolu_1");
  EXPECT_EQ(asked.tool_calls[0].name, "read_file");
  EXPECT_EQ(asked.tool_calls[0].arguments, (Json{{"path", "swish.cu"}}));
  EXPECT_EQ(asked.tool_calls[1].id, "toolu_2");

  request.messages.push_back(Message::Assistant(asked.text, asked.tool_calls));
  request.messages.push_back(
      Message::Tool({"toolu_1", "read_file", "__global__ void k();", false}));
  request.messages.push_back(Message::Tool({"toolu_2", "read_file", "no such file", true}));
  request.messages.push_back(Message::User("And now?"));
  Outcome second = backend->Complete(request);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(second.response().text, "Use float4 loads.");

  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].JsonBody()["tools"][0]["input_schema"], testing::ReadFileTool().input_schema);
  const Json messages = got[1].JsonBody()["messages"];
  ASSERT_EQ(messages.size(), 3u) << messages.dump(2);  // user, assistant, user
  EXPECT_EQ(messages[1]["role"], "assistant");
  EXPECT_EQ(messages[1]["content"][1], (Json{{"type", "tool_use"},
                                             {"id", "toolu_1"},
                                             {"name", "read_file"},
                                             {"input", {{"path", "swish.cu"}}}}));
  EXPECT_EQ(messages[2], (Json{{"role", "user"},
                               {"content",
                                {{{"type", "tool_result"},
                                  {"tool_use_id", "toolu_1"},
                                  {"content", "__global__ void k();"},
                                  {"is_error", false}},
                                 {{"type", "tool_result"},
                                  {"tool_use_id", "toolu_2"},
                                  {"content", "no such file"},
                                  {"is_error", true}},
                                 {{"type", "text"}, {"text", "And now?"}}}}}));
}

TEST(AnthropicBackendTest, StructuredOutputIsPromptEnforced) {
  FakeServer server;
  server.ReplyJson(
      TextReply("Here is the plan:\n```json\n" + testing::CandidatesAnswer().dump(2) + "\n```"));
  auto backend = MakeAnthropicBackend(OptionsFor(server), MakeCurlTransport());
  Outcome out = backend->Complete(testing::StructuredRequest());
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  ASSERT_TRUE(out.response().structured.has_value());
  EXPECT_EQ(*out.response().structured, testing::CandidatesAnswer());
  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  const Json body = got[0].JsonBody();
  EXPECT_FALSE(body.contains("response_format"));
  const std::string system = body["system"];
  EXPECT_EQ(system.rfind("You optimise CUDA kernels for an H200.", 0), 0u) << system;
  EXPECT_NE(system.find(DumpJson(testing::CandidatesSchema().schema)), std::string::npos)
      << "schema missing: " << system;
}

TEST(AnthropicBackendTest, StructuredAnswerWithoutJsonIsMalformedAndShowsTheReply) {
  FakeServer server;
  server.ReplyJson(TextReply("I would vectorise the loads and fuse the sigmoid."));
  Outcome out =
      MakeAnthropicBackend(OptionsFor(server), nullptr)->Complete(testing::StructuredRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kMalformed);
  EXPECT_NE(out.error().message.find("anthropic: "), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("I would vectorise the loads"), std::string::npos)
      << out.error().message;
}

TEST(AnthropicBackendTest, MaxTokensStopIsReportedAsLength) {
  FakeServer server;
  server.ReplyJson(TextReply("The kernel is memory bound because", "max_tokens"));
  Outcome out =
      MakeAnthropicBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().stop_reason, FinishReason::kLength);
  EXPECT_EQ(out.response().provider_stop_reason, "max_tokens");
}

TEST(AnthropicBackendTest, RateLimitIsReturnedWithRetryAfterAndNotRetried) {
  FakeServer server;
  ScriptedReply limited = ScriptedReply::Json(
      Json{{"type", "error"},
           {"error", {{"type", "rate_limit_error"}, {"message", "Number of requests exceeded"}}}},
      429);
  limited.headers.insert({"retry-after", "12"});
  server.Reply(limited);
  Outcome out =
      MakeAnthropicBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kRateLimited);
  ASSERT_TRUE(out.error().retry_after_s.has_value());
  EXPECT_EQ(*out.error().retry_after_s, 12.0);
  EXPECT_EQ(out.error().message, "anthropic: Number of requests exceeded");
  EXPECT_EQ(server.Received().size(), 1u);  // retrying is the decorators' job
}

TEST(AnthropicBackendTest, ServerErrorsAreKServer) {
  for (int status : {500, 529}) {  // 529: Anthropic's "overloaded"
    FakeServer server;
    server.ReplyJson(Json{{"type", "error"},
                          {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}},
                     status);
    Outcome out =
        MakeAnthropicBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().kind, ErrorKind::kServer) << status;
    EXPECT_EQ(out.error().http_status, status);
  }
}

TEST(AnthropicBackendTest, StalledServerTimesOut) {
  FakeServer server;
  ScriptedReply slow = ScriptedReply::Json(TextReply("late"));
  slow.stall = std::chrono::milliseconds(1500);
  server.Reply(slow);
  AnthropicOptions options = OptionsFor(server);
  options.total_timeout = std::chrono::milliseconds(300);
  Outcome out = MakeAnthropicBackend(options, nullptr)->Complete(testing::PlainRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kTimeout) << out.error().ToString();
}

TEST(AnthropicBackendTest, MalformedBodiesAreClearErrors) {
  struct Case {
    std::string body, expected;
  };
  const Case cases[] = {
      {"  \n", "anthropic: empty response body (HTTP 200)"},
      {"{\"content\": [", "anthropic: response body is not JSON (HTTP 200): \"{\"content\": [\""},
      {R"({"type": "message", "role": "assistant"})", "anthropic: response has no content: "},
  };
  for (const Case& c : cases) {
    FakeServer server;
    ScriptedReply reply;
    reply.body = c.body;
    server.Reply(reply);
    Outcome out =
        MakeAnthropicBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
    ASSERT_FALSE(out.ok()) << c.body;
    EXPECT_EQ(out.error().kind, ErrorKind::kMalformed) << c.body;
    EXPECT_NE(out.error().message.find(c.expected), std::string::npos) << out.error().message;
  }
}

TEST(AnthropicBackendTest, RefusedConnectionIsAConnectionError) {
  AnthropicOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(testing::ClosedPort());
  options.model = "claude-test";
  Outcome out = MakeAnthropicBackend(options, nullptr)->Complete(testing::PlainRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kConnection) << out.error().ToString();
}

// The Messages API has no seed parameter (an unknown field is refused): a seeded request is sent
// as the unseeded one.
TEST(AnthropicGoldenTest, SeedIsLeftOut) {
  Request seeded = testing::PlainRequest();
  seeded.seed = 7;
  EXPECT_EQ(AnthropicRequestBody(seeded, "claude-test"),
            AnthropicRequestBody(testing::PlainRequest(), "claude-test"));
}

TEST(AnthropicGoldenTest, RequestBodiesAsReviewed) {
  testing::ExpectGoldenBody("anthropic_request_plain.json",
                            AnthropicRequestBody(testing::PlainRequest(), "claude-sonnet-4-5"));
  testing::ExpectGoldenBody("anthropic_request_tools.json",
                            AnthropicRequestBody(testing::ToolRequest(), "claude-sonnet-4-5"));
  testing::ExpectGoldenBody(
      "anthropic_request_structured.json",
      AnthropicRequestBody(testing::StructuredRequest(), "claude-sonnet-4-5"));
}

HttpResponse Ok(std::string body) {
  HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

TEST(AnthropicParseTest, RecordedToolUse) {
  Outcome out = ParseAnthropicResponse(Ok(testing::Fixture("anthropic_tool_use.json")));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  const Response& r = out.response();
  EXPECT_EQ(r.text, "I will read the kernel first.");
  EXPECT_EQ(r.stop_reason, FinishReason::kToolUse);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "toolu_01A09q90qw90lq917835lq9");
  EXPECT_EQ(r.tool_calls[0].arguments, (Json{{"path", "swish.cu"}}));
  EXPECT_EQ(r.usage.input_tokens, 1503);
  EXPECT_EQ(r.usage.output_tokens, 71);
  EXPECT_EQ(r.model, "claude-sonnet-4-5-20250929");
}

TEST(AnthropicParseTest, FinishReasonsAreNormalisedAndThinkingIsNotTheAnswer) {
  const std::pair<const char*, FinishReason> cases[] = {
      {"end_turn", FinishReason::kEnd},      {"stop_sequence", FinishReason::kEnd},
      {"max_tokens", FinishReason::kLength}, {"tool_use", FinishReason::kToolUse},
      {"refusal", FinishReason::kRefusal},
  };
  for (const auto& [reason, expected] : cases) {
    Json reply = MessagesReply({{{"type", "thinking"}, {"thinking", "hmm"}, {"signature", "s"}},
                                {{"type", "text"}, {"text", "a"}},
                                {{"type", "text"}, {"text", "b"}}},
                               reason);
    Outcome out = ParseAnthropicResponse(Ok(reply.dump()));
    ASSERT_TRUE(out.ok()) << reason;
    EXPECT_EQ(out.response().stop_reason, expected) << reason;
    EXPECT_EQ(out.response().provider_stop_reason, reason);
    EXPECT_EQ(out.response().text, "ab");
  }
}

}  // namespace llm_anthropic_test
}  // namespace kernelpro::llm
