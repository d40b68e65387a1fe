// The OpenAI backend against an in-process server speaking Chat Completions over real sockets:
// what goes on the wire (golden bodies, headers), how replies and failures come back, and the
// structured-output fallback for servers that reject response_format.
#include "llm/openai.h"

#include <gtest/gtest.h>

#include "llm/backend_testing.h"
#include "llm/fake_server_testing.h"

namespace kernelpro::llm {
namespace llm_openai_test {

using testing::FakeServer;
using testing::ScriptedReply;

OpenAiOptions OptionsFor(const FakeServer& server) {
  OpenAiOptions options;
  options.base_url = server.BaseUrl() + "/v1/";  // the trailing slash must not double up
  options.model = "gpt-test";
  options.api_key = "sk-test";
  return options;
}

// A Chat Completions reply with one choice.
Json ChatReply(const Json& message, const std::string& finish_reason) {
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "gpt-test-2025"},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish_reason}}}},
          {"usage", {{"prompt_tokens", 120}, {"completion_tokens", 30}, {"total_tokens", 150}}}};
}

Json TextReply(const std::string& text, const std::string& finish_reason = "stop") {
  return ChatReply({{"role", "assistant"}, {"content", text}}, finish_reason);
}

TEST(OpenAiBackendTest, PlainAnswerWithTokensModelAndHeaders) {
  FakeServer server;
  server.ReplyJson(TextReply("Each element is read once: DRAM bandwidth bounds it."));
  auto backend = MakeOpenAiBackend(OptionsFor(server), MakeCurlTransport());
  EXPECT_EQ(backend->provider(), "openai");
  EXPECT_EQ(backend->model(), "gpt-test");

  Outcome out = backend->Complete(testing::PlainRequest());
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  const Response& r = out.response();
  EXPECT_EQ(r.text, "Each element is read once: DRAM bandwidth bounds it.");
  EXPECT_EQ(r.stop_reason, FinishReason::kEnd);
  EXPECT_EQ(r.provider_stop_reason, "stop");
  EXPECT_EQ(r.usage.input_tokens, 120);
  EXPECT_EQ(r.usage.output_tokens, 30);
  EXPECT_EQ(r.model, "gpt-test-2025");
  EXPECT_GT(r.latency_ms, 0);
  EXPECT_FALSE(r.structured.has_value());

  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "POST");
  EXPECT_EQ(got[0].path, "/v1/chat/completions");
  EXPECT_EQ(got[0].Header("Authorization"), "Bearer sk-test");
  EXPECT_EQ(got[0].Header("Content-Type"), "application/json");
  // What goes on the wire is exactly the golden-tested body.
  EXPECT_EQ(got[0].JsonBody(), OpenAiRequestBody(testing::PlainRequest(), "gpt-test", true));
}

TEST(OpenAiBackendTest, NoAuthorizationHeaderWithoutAnApiKey) {
  FakeServer server;
  server.ReplyJson(TextReply("hi"));
  OpenAiOptions options = OptionsFor(server);
  options.api_key.clear();  // a local llama-server
  ASSERT_TRUE(MakeOpenAiBackend(options, nullptr)->Complete(testing::PlainRequest()).ok());
  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].Header("Authorization"), "");
}

// vLLM, SGLang, llama.cpp's server and OpenAI take "seed": a seeded request sends it, an unseeded
// one sends no seed field at all (the body stays the golden one).
TEST(OpenAiBackendTest, SeedGoesOnTheWireOnlyWhenSet) {
  FakeServer server;
  server.ReplyJson(TextReply("one"));
  server.ReplyJson(TextReply("two"));
  auto backend = MakeOpenAiBackend(OptionsFor(server), nullptr);
  Request seeded = testing::PlainRequest();
  seeded.seed = 7000049;
  ASSERT_TRUE(backend->Complete(seeded).ok());
  ASSERT_TRUE(backend->Complete(testing::PlainRequest()).ok());
  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(got[0].JsonBody().contains("seed")) << got[0].body;
  EXPECT_EQ(got[0].JsonBody()["seed"], Json(7000049));
  EXPECT_FALSE(got[1].JsonBody().contains("seed")) << got[1].body;
  EXPECT_EQ(got[0].JsonBody(), OpenAiRequestBody(seeded, "gpt-test", true));
}

TEST(OpenAiBackendTest, ToolCallRoundTrip) {
  FakeServer server;
  server.ReplyJson(ChatReply(
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {{{"id", "call_abc"},
          {"type", "function"},
          {"function", {{"name", "read_file"}, {"arguments", R"({"path": "swish.cu"})"}}}}}}},
      "tool_calls"));
  server.ReplyJson(TextReply("Use float4 loads."));
  auto backend = MakeOpenAiBackend(OptionsFor(server), MakeCurlTransport());

  Request request = testing::PlainRequest();
  request.tools = {testing::ReadFileTool()};
  Outcome first = backend->Complete(request);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first.response().stop_reason, FinishReason::kToolUse);
  EXPECT_EQ(first.response().text, "");
  ASSERT_EQ(first.response().tool_calls.size(), 1u);
  const ToolCall& call = first.response().tool_calls[0];
  EXPECT_EQ(call.id, "call_abc");
  EXPECT_EQ(call.name, "read_file");
  EXPECT_EQ(call.arguments, (Json{{"path", "swish.cu"}}));

  request.messages.push_back(Message::Assistant(first.response().text, {call}));
  request.messages.push_back(
      Message::Tool({call.id, call.name, "__global__ void swish();", false}));
  Outcome second = backend->Complete(request);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(second.response().text, "Use float4 loads.");

  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].JsonBody()["tools"][0]["function"]["name"], "read_file");
  const Json messages = got[1].JsonBody()["messages"];
  ASSERT_EQ(messages.size(), 4u);  // system, user, assistant, tool
  const Json& asked = messages[2];
  EXPECT_EQ(asked["role"], "assistant");
  EXPECT_EQ(asked["content"], "");  // llama-cpp-python's server rejects null here
  EXPECT_EQ(asked["tool_calls"][0]["id"], "call_abc");
  EXPECT_EQ(asked["tool_calls"][0]["type"], "function");
  // Arguments travel back as a string holding the same JSON.
  ASSERT_TRUE(asked["tool_calls"][0]["function"]["arguments"].is_string());
  EXPECT_EQ(Json::parse(asked["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            (Json{{"path", "swish.cu"}}));
  EXPECT_EQ(messages[3], (Json{{"role", "tool"},
                               {"tool_call_id", "call_abc"},
                               {"content", "__global__ void swish();"}}));
}

TEST(OpenAiBackendTest, StructuredOutputThroughResponseFormat) {
  FakeServer server;
  server.ReplyJson(TextReply(testing::CandidatesAnswer().dump()));
  auto backend = MakeOpenAiBackend(OptionsFor(server), MakeCurlTransport());
  Outcome out = backend->Complete(testing::StructuredRequest());
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  ASSERT_TRUE(out.response().structured.has_value());
  EXPECT_EQ(*out.response().structured, testing::CandidatesAnswer());
  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  const Json body = got[0].JsonBody();
  EXPECT_EQ(body["response_format"]["type"], "json_schema");
  EXPECT_EQ(body["response_format"]["json_schema"]["schema"], testing::CandidatesSchema().schema);
  EXPECT_EQ(body["messages"][0]["content"], "You optimise CUDA kernels for an H200.");
}

// Replies of servers that cannot do json_schema: OpenAI's own wording for older models, and what
// llama.cpp answered (as a 500) before it supported json_schema.
std::vector<ScriptedReply> Rejections() {
  return {
      ScriptedReply::Json(Json{{"error",
                                {{"message",
                                  "Invalid parameter: 'response_format' of type 'json_schema' is "
                                  "not supported with this model."},
                                 {"type", "invalid_request_error"},
                                 {"param", "response_format"},
                                 {"code", nullptr}}}},
                          400),
      ScriptedReply::Json(Json{{"error",
                                {{"code", 500},
                                 {"message",
                                  "response_format type must be one of \"text\" or "
                                  "\"json_object\", but got: json_schema"},
                                 {"type", "server_error"}}}},
                          500),
  };
}

TEST(OpenAiBackendTest, RejectedResponseFormatFallsBackToThePromptAndIsRemembered) {
  for (const ScriptedReply& rejection : Rejections()) {
    FakeServer server;
    server.Reply(rejection);
    server.ReplyJson(TextReply("Here is the plan:\n```json\n" +
                               testing::CandidatesAnswer().dump(2) + "\n```\nGood luck."));
    server.ReplyJson(TextReply(testing::CandidatesAnswer().dump()));
    auto backend = MakeOpenAiBackend(OptionsFor(server), MakeCurlTransport());

    Outcome first = backend->Complete(testing::StructuredRequest());
    ASSERT_TRUE(first.ok()) << first.error().ToString();
    EXPECT_EQ(first.response().attempts, 2);
    ASSERT_TRUE(first.response().structured.has_value());
    EXPECT_EQ(*first.response().structured, testing::CandidatesAnswer());

    auto got = server.Received();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(got[0].JsonBody().contains("response_format"));
    const Json retry = got[1].JsonBody();
    EXPECT_FALSE(retry.contains("response_format"));
    EXPECT_EQ(retry, OpenAiRequestBody(testing::StructuredRequest(), "gpt-test", false));
    const std::string system = retry["messages"][0]["content"];
    EXPECT_EQ(system.rfind("You optimise CUDA kernels for an H200.", 0), 0u) << system;
    EXPECT_NE(system.find(DumpJson(testing::CandidatesSchema().schema)), std::string::npos)
        << "schema missing: " << system;

    // The same backend does not ask again.
    Outcome second = backend->Complete(testing::StructuredRequest());
    ASSERT_TRUE(second.ok()) << second.error().ToString();
    EXPECT_EQ(second.response().attempts, 1);
    EXPECT_EQ(*second.response().structured, testing::CandidatesAnswer());
    got = server.Received();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_FALSE(got[2].JsonBody().contains("response_format"));
  }
}

TEST(OpenAiBackendTest, OtherBadRequestsAreNotMistakenForAResponseFormatRejection) {
  FakeServer server;
  server.ReplyJson(Json{{"error", {{"message", "max_tokens is too large: 999999"}}}}, 400);
  auto backend = MakeOpenAiBackend(OptionsFor(server), MakeCurlTransport());
  Outcome out = backend->Complete(testing::StructuredRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kBadRequest);
  EXPECT_EQ(out.error().message, "openai: max_tokens is too large: 999999");
  EXPECT_EQ(server.Received().size(), 1u);
}

TEST(OpenAiBackendTest, StructuredAnswerWithoutJsonIsMalformedAndShowsTheReply) {
  FakeServer server;
  server.ReplyJson(TextReply("I would vectorise the loads and fuse the sigmoid."));
  OpenAiOptions options = OptionsFor(server);
  options.structured_output = false;  // straight to the prompt, no response_format
  Outcome out =
      MakeOpenAiBackend(options, MakeCurlTransport())->Complete(testing::StructuredRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kMalformed);
  EXPECT_NE(out.error().message.find("I would vectorise the loads"), std::string::npos)
      << out.error().message;
  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].JsonBody().contains("response_format"));
}

TEST(OpenAiBackendTest, LengthStopIsReportedAsLength) {
  FakeServer server;
  server.ReplyJson(TextReply("The kernel is memory bound because", "length"));
  Outcome out = MakeOpenAiBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().stop_reason, FinishReason::kLength);
  EXPECT_EQ(out.response().provider_stop_reason, "length");
}

TEST(OpenAiBackendTest, RefusalIsReportedWithItsText) {
  FakeServer server;
  server.ReplyJson(ChatReply(
      {{"role", "assistant"}, {"content", nullptr}, {"refusal", "I can't help with that."}},
      "stop"));
  Outcome out = MakeOpenAiBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().stop_reason, FinishReason::kRefusal);
  EXPECT_EQ(out.response().text, "I can't help with that.");
}

TEST(OpenAiBackendTest, RateLimitIsReturnedWithRetryAfterAndNotRetried) {
  FakeServer server;
  ScriptedReply limited = ScriptedReply::Json(
      Json{{"error", {{"message", "Rate limit reached for gpt-test"}, {"type", "requests"}}}}, 429);
  limited.headers.insert({"Retry-After", "7"});
  server.Reply(limited);
  Outcome out = MakeOpenAiBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kRateLimited);
  EXPECT_EQ(out.error().http_status, 429);
  ASSERT_TRUE(out.error().retry_after_s.has_value());
  EXPECT_EQ(*out.error().retry_after_s, 7.0);
  EXPECT_EQ(out.error().message, "openai: Rate limit reached for gpt-test");
  EXPECT_EQ(server.Received().size(), 1u);  // retrying is the decorators' job
}

TEST(OpenAiBackendTest, ServerErrorIsKServer) {
  FakeServer server;
  server.ReplyJson(Json{{"error", {{"message", "The server had an error"}}}}, 500);
  Outcome out = MakeOpenAiBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kServer);
  EXPECT_EQ(out.error().http_status, 500);
  EXPECT_EQ(server.Received().size(), 1u);
}

TEST(OpenAiBackendTest, StalledServerTimesOut) {
  FakeServer server;
  ScriptedReply slow = ScriptedReply::Json(TextReply("late"));
  slow.stall = std::chrono::milliseconds(1500);
  server.Reply(slow);
  OpenAiOptions options = OptionsFor(server);
  options.total_timeout = std::chrono::milliseconds(300);
  Outcome out = MakeOpenAiBackend(options, nullptr)->Complete(testing::PlainRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kTimeout) << out.error().ToString();
}

TEST(OpenAiBackendTest, MalformedBodiesAreClearErrors) {
  struct Case {
    std::string body, expected;
  };
  const Case cases[] = {
      {"", "openai: empty response body (HTTP 200)"},
      {"<html>502 Bad Gateway</html>",
       "openai: response body is not JSON (HTTP 200): \"<html>502 Bad Gateway</html>\""},
      {R"({"object": "chat.completion", "choices": []})", "openai: response has no choices: "},
      {R"({"error": {"message": "upstream overloaded"}})", "upstream overloaded"},
  };
  for (const Case& c : cases) {
    FakeServer server;
    ScriptedReply reply;
    reply.body = c.body;
    server.Reply(reply);
    Outcome out = MakeOpenAiBackend(OptionsFor(server), nullptr)->Complete(testing::PlainRequest());
    ASSERT_FALSE(out.ok()) << c.body;
    EXPECT_EQ(out.error().kind, ErrorKind::kMalformed) << c.body;
    EXPECT_NE(out.error().message.find(c.expected), std::string::npos) << out.error().message;
  }
}

TEST(OpenAiBackendTest, RefusedConnectionIsAConnectionError) {
  OpenAiOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(testing::ClosedPort()) + "/v1";
  options.model = "gpt-test";
  Outcome out = MakeOpenAiBackend(options, nullptr)->Complete(testing::PlainRequest());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kConnection) << out.error().ToString();
}

TEST(OpenAiGoldenTest, RequestBodiesAsReviewed) {
  testing::ExpectGoldenBody("openai_request_plain.json",
                            OpenAiRequestBody(testing::PlainRequest(), "gpt-4o", true));
  testing::ExpectGoldenBody("openai_request_tools.json",
                            OpenAiRequestBody(testing::ToolRequest(), "gpt-4o", true));
  testing::ExpectGoldenBody("openai_request_structured.json",
                            OpenAiRequestBody(testing::StructuredRequest(), "gpt-4o", true));
  testing::ExpectGoldenBody("openai_request_structured_fallback.json",
                            OpenAiRequestBody(testing::StructuredRequest(), "qwen3-32b", false));
}

HttpResponse Ok(std::string body) {
  HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

TEST(OpenAiParseTest, RecordedOpenAiAnswer) {
  Outcome out = ParseOpenAiResponse(Ok(testing::Fixture("openai_gpt4o_answer.json")));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  const Response& r = out.response();
  EXPECT_EQ(r.text.rfind("The kernel reads each element once", 0), 0u) << r.text;
  EXPECT_EQ(r.stop_reason, FinishReason::kEnd);  // refusal: null is not a refusal
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_EQ(r.usage.input_tokens, 1117);
  EXPECT_EQ(r.usage.output_tokens, 46);
  EXPECT_EQ(r.model, "gpt-4o-2024-08-06");
}

TEST(OpenAiParseTest, RecordedLlamaCppToolCall) {
  Outcome out = ParseOpenAiResponse(Ok(testing::Fixture("llamacpp_tool_call.json")));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  const Response& r = out.response();
  EXPECT_EQ(r.text, "");  // content: null; the reasoning is not the answer
  EXPECT_EQ(r.stop_reason, FinishReason::kToolUse);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "x7RkV2mQa9LpT4sWc1NbZ8eHjD3fGy6U");
  EXPECT_EQ(r.tool_calls[0].name, "read_file");
  EXPECT_EQ(r.tool_calls[0].arguments, (Json{{"path", "swish.cu"}}));
  EXPECT_EQ(r.usage.input_tokens, 641);
  EXPECT_EQ(r.usage.output_tokens, 58);
  EXPECT_EQ(r.model, "Qwen3-32B-Q4_K_M.gguf");
}

TEST(OpenAiParseTest, BrokenToolArgumentsAreKeptRawAndMissingIdsAreMadeUp) {
  // What small local models write, and servers (Ollama) that give no ids and say "stop".
  Json reply =
      ChatReply({{"role", "assistant"},
                 {"content", ""},
                 {"tool_calls",
                  {{{"function", {{"name", "read_file"}, {"arguments", "{path: swish.cu"}}}},
                   {{"function", {{"name", "run_benchmark"}, {"arguments", ""}}}}}}},
                "stop");
  Outcome out = ParseOpenAiResponse(Ok(reply.dump()));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  const Response& r = out.response();
  EXPECT_EQ(r.stop_reason, FinishReason::kToolUse);
  EXPECT_EQ(r.provider_stop_reason, "stop");
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].id, "call_0");
  EXPECT_EQ(r.tool_calls[0].arguments, (Json{{"_raw", "{path: swish.cu"}}));
  EXPECT_EQ(r.tool_calls[1].id, "call_1");
  EXPECT_EQ(r.tool_calls[1].arguments, Json::object());
}

TEST(OpenAiParseTest, FinishReasonsAreNormalised) {
  const std::pair<const char*, FinishReason> cases[] = {
      {"stop", FinishReason::kEnd},
      {"length", FinishReason::kLength},
      {"tool_calls", FinishReason::kToolUse},
      {"function_call", FinishReason::kToolUse},
      {"content_filter", FinishReason::kRefusal},
  };
  for (const auto& [reason, expected] : cases) {
    Outcome out = ParseOpenAiResponse(Ok(TextReply("x", reason).dump()));
    ASSERT_TRUE(out.ok()) << reason;
    EXPECT_EQ(out.response().stop_reason, expected) << reason;
    EXPECT_EQ(out.response().provider_stop_reason, reason);
  }
}

}  // namespace llm_openai_test
}  // namespace kernelpro::llm
