// The Bedrock backend against a real local HTTP server: what goes out (path, body, a signature the
// server can verify), what comes back (text, tool calls, structured output, stop reasons), and
// every failure a user can meet (throttling, server errors, stalls, garbage, nobody listening).
// Request bodies are also golden files; regenerate after an intended change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='BedrockGolden*'
// and read the diff before committing it.
#include "llm/bedrock.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "llm/backend_testing.h"
#include "llm/fake_server_testing.h"
#include "llm/sigv4.h"

namespace kernelpro::llm {
namespace llm_bedrock_test {

using std::chrono::system_clock;
using testing::FakeServer;
using testing::ReceivedRequest;
using testing::ScriptedReply;

constexpr char kModel[] = "anthropic.claude-3-5-sonnet-20240620-v1:0";
constexpr char kRegion[] = "us-west-2";
const AwsCredentials kCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};

system_clock::time_point FixedTime() {
  using namespace std::chrono;
  return sys_days{year{2024} / June / 20} + hours{10} + minutes{11} + seconds{12};
}

BedrockOptions Options(const std::string& base_url) {
  BedrockOptions options;
  options.region = kRegion;
  options.model = kModel;
  options.base_url = base_url;
  options.credentials = kCredentials;
  return options;
}

std::unique_ptr<Backend> MakeBackend(const BedrockOptions& options) {
  return MakeBedrockBackend(options, MakeCurlTransport(), FixedTime);
}

// A Converse reply as Bedrock shapes it.
Json ConverseReply(Json content, const std::string& stop_reason = "end_turn") {
  return {{"output", {{"message", {{"role", "assistant"}, {"content", std::move(content)}}}}},
          {"stopReason", stop_reason},
          {"usage", {{"inputTokens", 120}, {"outputTokens", 34}, {"totalTokens", 154}}},
          {"metrics", {{"latencyMs", 812}}}};
}

ScriptedReply AwsError(int status, const std::string& type, const std::string& message) {
  ScriptedReply reply = ScriptedReply::Json(Json{{"message", message}}, status);
  reply.headers.insert(
      {"x-amzn-ErrorType", type + ":http://internal.amazon.com/coral/com.amazon.bedrock/"});
  return reply;
}

Request Ask(const std::string& text) {
  Request request;
  request.system = "You optimise CUDA kernels.";
  request.messages.push_back(Message::User(text));
  request.max_tokens = 512;
  return request;
}

// What the server would compute: the headers the client listed as signed, taken from the request
// as it arrived, signed again with the same key and time.
std::string RecomputeSignature(const ReceivedRequest& got, const AwsCredentials& credentials) {
  std::string authorization = got.Header("Authorization");
  size_t begin = authorization.find("SignedHeaders=") + 14;
  std::string list = authorization.substr(begin, authorization.find(',', begin) - begin);
  std::set<std::string> signed_names;
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ';');) signed_names.insert(name);

  SigV4Request request;
  request.method = got.method;
  request.url = "http://" + got.Header("Host") + got.target;
  request.body = got.body;
  for (const auto& [name, value] : got.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // The signer adds the date and token itself; everything else signed is passed through.
    if (signed_names.count(lower) && lower != "x-amz-date" && lower != "x-amz-security-token") {
      request.headers.emplace_back(name, value);
    }
  }
  std::string date = got.Header("X-Amz-Date");
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  std::sscanf(date.c_str(), "%4d%2d%2dT%2d%2d%2dZ", &y, &mo, &d, &h, &mi, &s);
  using namespace std::chrono;
  system_clock::time_point when =
      sys_days{year{y} / month{static_cast<unsigned>(mo)} / day{static_cast<unsigned>(d)}} +
      hours{h} + minutes{mi} + seconds{s};
  Result<SigV4Signature> signature = SignV4(request, credentials, {kRegion, "bedrock"}, when);
  return signature.ok() ? signature->signature : "signing failed: " + signature.status().message();
}

TEST(BedrockTest, PlainAnswer) {
  FakeServer server;
  server.ReplyJson(ConverseReply(Json::array({{{"text", "Use "}}, {{"text", "shared memory."}}})));
  Request request = Ask("How do I make this faster?");
  Outcome outcome = MakeBackend(Options(server.BaseUrl()))->Complete(request);
  ASSERT_TRUE(outcome.ok()) << outcome.error().ToString();
  const Response& r = outcome.response();
  EXPECT_EQ(r.text, "Use shared memory.");
  EXPECT_EQ(r.stop_reason, FinishReason::kEnd);
  EXPECT_EQ(r.provider_stop_reason, "end_turn");
  EXPECT_EQ(r.usage.input_tokens, 120);
  EXPECT_EQ(r.usage.output_tokens, 34);
  EXPECT_EQ(r.model, kModel);
  EXPECT_TRUE(r.tool_calls.empty());

  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "POST");
  // The ':' of the model id is percent-encoded on the wire.
  EXPECT_EQ(got[0].target, "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse");
  EXPECT_EQ(got[0].Header("Content-Type"), "application/json");
  EXPECT_EQ(got[0].JsonBody(), BedrockRequestBody(request));
  EXPECT_EQ(got[0].JsonBody()["system"], Json::array({{{"text", "You optimise CUDA kernels."}}}));
}

TEST(BedrockTest, TheRequestIsSignedSoAwsCanVerifyIt) {
  FakeServer server;
  server.ReplyJson(ConverseReply(Json::array({{{"text", "ok"}}})));
  server.ReplyJson(ConverseReply(Json::array({{{"text", "ok"}}})));
  ASSERT_TRUE(MakeBackend(Options(server.BaseUrl()))->Complete(Ask("hi")).ok());
  BedrockOptions with_token = Options(server.BaseUrl());
  with_token.credentials.session_token = "FwoGZXIvYXdzEXAMPLETOKEN";
  ASSERT_TRUE(MakeBackend(with_token)->Complete(Ask("hi")).ok());

  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  const std::string authorization = got[0].Header("Authorization");
  EXPECT_EQ(
      authorization.rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240620/us-west-2/bedrock/"
                          "aws4_request, SignedHeaders=accept;content-type;host;x-amz-date, "
                          "Signature=",
                          0),
      0u)
      << authorization;
  EXPECT_EQ(got[0].Header("X-Amz-Date"), "20240620T101112Z");  // the injected clock
  EXPECT_EQ(got[0].Header("X-Amz-Security-Token"), "");
  const std::string sent = authorization.substr(authorization.rfind('=') + 1);
  EXPECT_EQ(sent.size(), 64u);
  EXPECT_EQ(RecomputeSignature(got[0], kCredentials), sent);
  // The check above is not vacuous: one byte more in the body and it no longer verifies.
  ReceivedRequest tampered = got[0];
  tampered.body += " ";
  EXPECT_NE(RecomputeSignature(tampered, kCredentials), sent);

  // Temporary credentials: the token is sent and signed.
  const std::string with_token_auth = got[1].Header("Authorization");
  EXPECT_EQ(got[1].Header("X-Amz-Security-Token"), "FwoGZXIvYXdzEXAMPLETOKEN");
  EXPECT_NE(with_token_auth.find("SignedHeaders=accept;content-type;host;x-amz-date;"
                                 "x-amz-security-token,"),
            std::string::npos)
      << with_token_auth;
  EXPECT_EQ(RecomputeSignature(got[1], with_token.credentials),
            with_token_auth.substr(with_token_auth.rfind('=') + 1));
}

TEST(BedrockTest, ToolCallRoundTrip) {
  FakeServer server;
  server.ReplyJson(ConverseReply(Json::array({{{"text", "Let me read both."}},
                                              {{"toolUse",
                                                {{"toolUseId", "tooluse_a1"},
                                                 {"name", "read_file"},
                                                 {"input", {{"path", "kernel.cu"}}}}}},
                                              {{"toolUse",
                                                {{"toolUseId", "tooluse_b2"},
                                                 {"name", "read_file"},
                                                 {"input", {{"path", "missing.cu"}}}}}}}),
                                 "tool_use"));
  server.ReplyJson(ConverseReply(Json::array({{{"text", "The kernel is memory bound."}}})));
  auto backend = MakeBackend(Options(server.BaseUrl()));

  Request request = Ask("Why is it slow?");
  request.tools.push_back({"read_file", "Reads a source file",
                           Json{{"type", "object"},
                                {"properties", {{"path", {{"type", "string"}}}}},
                                {"required", {"path"}}}});
  Outcome first = backend->Complete(request);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first.response().stop_reason, FinishReason::kToolUse);
  EXPECT_EQ(first.response().text, "Let me read both.");
  ASSERT_EQ(first.response().tool_calls.size(), 2u);
  EXPECT_EQ(first.response().tool_calls[0].id, "tooluse_a1");
  EXPECT_EQ(first.response().tool_calls[0].name, "read_file");
  EXPECT_EQ(first.response().tool_calls[0].arguments, (Json{{"path", "kernel.cu"}}));

  request.messages.push_back(
      Message::Assistant(first.response().text, first.response().tool_calls));
  request.messages.push_back(
      Message::Tool({"tooluse_a1", "read_file", "__global__ void k() {}", false}));
  request.messages.push_back(Message::Tool({"tooluse_b2", "read_file", "no such file", true}));
  Outcome second = backend->Complete(request);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(second.response().text, "The kernel is memory bound.");

  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  Json body = got[1].JsonBody();
  ASSERT_EQ(body["messages"].size(), 3u);  // user, assistant, user: roles alternate
  EXPECT_EQ(body["messages"][1]["role"], "assistant");
  EXPECT_EQ(body["messages"][1]["content"][1]["toolUse"]["input"], (Json{{"path", "kernel.cu"}}));
  const Json& results = body["messages"][2];
  EXPECT_EQ(results["role"], "user");
  ASSERT_EQ(results["content"].size(), 2u);  // both results in one user turn
  EXPECT_EQ(results["content"][0]["toolResult"],
            (Json{{"toolUseId", "tooluse_a1"},
                  {"content", {{{"text", "__global__ void k() {}"}}}},
                  {"status", "success"}}));
  EXPECT_EQ(results["content"][1]["toolResult"]["status"], "error");
  EXPECT_EQ(body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["required"],
            Json::array({"path"}));
}

TEST(BedrockTest, StructuredOutputIsAskedForInThePromptAndExtracted) {
  FakeServer server;
  server.ReplyJson(ConverseReply(Json::array(
      {{{"text",
         "Here is the plan:\n```json\n{\"tile\": 64, \"use_tensor_cores\": true}\n```"}}})));
  server.ReplyJson(ConverseReply(Json::array({{{"text", "I would rather explain in prose."}}})));
  auto backend = MakeBackend(Options(server.BaseUrl()));
  Request request = Ask("Plan the tiling.");
  request.response_schema =
      ResponseSchema{"plan", Json{{"type", "object"}, {"required", {"tile"}}}};

  Outcome outcome = backend->Complete(request);
  ASSERT_TRUE(outcome.ok()) << outcome.error().ToString();
  ASSERT_TRUE(outcome.response().structured.has_value());
  EXPECT_EQ(*outcome.response().structured, (Json{{"tile", 64}, {"use_tensor_cores", true}}));
  std::string system = server.Received()[0].JsonBody()["system"][0]["text"];
  EXPECT_EQ(system.rfind("You optimise CUDA kernels.\n\n", 0), 0u) << system;
  EXPECT_NE(system.find(R"({"required":["tile"],"type":"object"})"), std::string::npos) << system;

  Outcome prose = backend->Complete(request);
  ASSERT_FALSE(prose.ok());
  EXPECT_EQ(prose.error().kind, ErrorKind::kMalformed);
  EXPECT_NE(prose.error().message.find("I would rather explain"), std::string::npos)
      << prose.error().message;
}

TEST(BedrockTest, MaxTokensIsATruncatedAnswerNotAnError) {
  FakeServer server;
  server.ReplyJson(ConverseReply(Json::array({{{"text", "The first half of"}}}), "max_tokens"));
  Request request = Ask("Explain everything.");
  request.response_schema = ResponseSchema{};  // truncation recovery gets it, not kMalformed
  Outcome outcome = MakeBackend(Options(server.BaseUrl()))->Complete(request);
  ASSERT_TRUE(outcome.ok()) << outcome.error().ToString();
  EXPECT_EQ(outcome.response().stop_reason, FinishReason::kLength);
  EXPECT_EQ(outcome.response().provider_stop_reason, "max_tokens");
  EXPECT_EQ(outcome.response().text, "The first half of");
  EXPECT_FALSE(outcome.response().structured.has_value());
}

TEST(BedrockTest, HttpErrorsBecomeErrorKindsWithBedrocksMessage) {
  FakeServer server;
  server.Reply(AwsError(429, "ThrottlingException", "Too many requests, please wait."));
  server.Reply(AwsError(500, "InternalServerException", "Internal server error"));
  server.Reply(AwsError(403, "UnrecognizedClientException",
                        "The security token included in the request is invalid."));
  server.Reply(AwsError(408, "ModelTimeoutException", "Model has timed out."));
  server.Reply(AwsError(400, "ValidationException", "Input is too long for requested model."));
  auto backend = MakeBackend(Options(server.BaseUrl()));

  Outcome throttled = backend->Complete(Ask("hi"));
  ASSERT_FALSE(throttled.ok());
  EXPECT_EQ(throttled.error().kind, ErrorKind::kRateLimited);
  EXPECT_EQ(throttled.error().http_status, 429);
  EXPECT_TRUE(throttled.error().retryable());
  EXPECT_EQ(throttled.error().message,
            "bedrock: ThrottlingException: Too many requests, please wait.");

  Outcome server_error = backend->Complete(Ask("hi"));
  ASSERT_FALSE(server_error.ok());
  EXPECT_EQ(server_error.error().kind, ErrorKind::kServer);
  EXPECT_EQ(server_error.error().http_status, 500);

  Outcome denied = backend->Complete(Ask("hi"));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().kind, ErrorKind::kAuth);
  EXPECT_NE(denied.error().message.find("security token included in the request is invalid"),
            std::string::npos);

  Outcome model_timeout = backend->Complete(Ask("hi"));
  ASSERT_FALSE(model_timeout.ok());
  EXPECT_EQ(model_timeout.error().kind, ErrorKind::kTimeout);

  Outcome too_long = backend->Complete(Ask("hi"));
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().kind, ErrorKind::kBadRequest);
  EXPECT_FALSE(too_long.error().retryable());
  EXPECT_EQ(too_long.error().message,
            "bedrock: ValidationException: Input is too long for requested model.");
}

TEST(BedrockTest, AStalledServerTimesOut) {
  FakeServer server;
  ScriptedReply slow = ScriptedReply::Json(ConverseReply(Json::array({{{"text", "late"}}})));
  slow.stall = std::chrono::milliseconds(1500);
  server.Reply(slow);
  BedrockOptions options = Options(server.BaseUrl());
  options.total_timeout = std::chrono::milliseconds(300);
  Outcome outcome = MakeBackend(options)->Complete(Ask("hi"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kTimeout) << outcome.error().ToString();
}

TEST(BedrockTest, EmptyOrMalformedBodiesAreMalformed) {
  FakeServer server;
  ScriptedReply empty;
  server.Reply(empty);
  ScriptedReply html;
  html.body = "<html>502 Bad Gateway</html>";
  html.content_type = "text/html";
  server.Reply(html);
  server.ReplyJson(Json{{"output", {{"message", {{"role", "assistant"}}}}}});
  auto backend = MakeBackend(Options(server.BaseUrl()));

  Outcome a = backend->Complete(Ask("hi"));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().kind, ErrorKind::kMalformed);
  EXPECT_NE(a.error().message.find("empty response body"), std::string::npos) << a.error().message;
  Outcome b = backend->Complete(Ask("hi"));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().kind, ErrorKind::kMalformed);
  EXPECT_NE(b.error().message.find("<html>502 Bad Gateway</html>"), std::string::npos);
  Outcome c = backend->Complete(Ask("hi"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::kMalformed);
  EXPECT_NE(c.error().message.find("output.message.content"), std::string::npos);
}

TEST(BedrockTest, RefusedConnectionIsAConnectionError) {
  BedrockOptions options = Options("http://127.0.0.1:" + std::to_string(testing::ClosedPort()));
  Outcome outcome = MakeBackend(options)->Complete(Ask("hi"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kConnection) << outcome.error().ToString();
}

TEST(BedrockTest, MissingConfigurationFailsBeforeSendingAnything) {
  FakeServer server;
  BedrockOptions no_model = Options(server.BaseUrl());
  no_model.model.clear();
  Outcome a = MakeBackend(no_model)->Complete(Ask("hi"));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().kind, ErrorKind::kConfig);
  BedrockOptions no_keys = Options(server.BaseUrl());
  no_keys.credentials = {};
  Outcome b = MakeBackend(no_keys)->Complete(Ask("hi"));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().kind, ErrorKind::kAuth);
  EXPECT_NE(b.error().message.find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_TRUE(server.Received().empty());
}

TEST(BedrockTest, FinishReasonsAndBlocksFromTheResponse) {
  HttpResponse http;
  http.status = 200;
  http.body =
      ConverseReply(Json::array({{{"text", "I can't help with that."}}}), "guardrail_intervened")
          .dump();
  Outcome refusal = ParseBedrockResponse(http);
  ASSERT_TRUE(refusal.ok());
  EXPECT_EQ(refusal.response().stop_reason, FinishReason::kRefusal);
  EXPECT_EQ(refusal.response().provider_stop_reason, "guardrail_intervened");

  http.body =
      ConverseReply(
          Json::array({{{"reasoningContent", {{"reasoningText", "hmm"}}}}, {{"text", "done"}}}),
          "stop_sequence")
          .dump();
  Outcome stop = ParseBedrockResponse(http);
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop.response().stop_reason, FinishReason::kEnd);
  EXPECT_EQ(stop.response().text, "done");

  http.body =
      ConverseReply(Json::array({{{"toolUse", {{"toolUseId", "t"}, {"input", {}}}}}}), "tool_use")
          .dump();
  Outcome nameless = ParseBedrockResponse(http);
  ASSERT_FALSE(nameless.ok());
  EXPECT_EQ(nameless.error().kind, ErrorKind::kMalformed);
}

// ---- Golden request bodies ----

void ExpectGolden(const std::string& name, const Json& body) {
  testing::ExpectGoldenBody(name + ".json", body);
}

// Converse has no seed parameter: a seeded request is sent as the unseeded one.
TEST(BedrockGoldenTest, SeedIsLeftOut) {
  Request seeded = testing::PlainRequest();
  seeded.seed = 7;
  EXPECT_EQ(BedrockRequestBody(seeded), BedrockRequestBody(testing::PlainRequest()));
}

TEST(BedrockGoldenTest, PlainRequest) {
  Request request = Ask("Make this kernel faster.");
  request.temperature = 0.2;
  request.stop = {"</answer>"};
  ExpectGolden("bedrock_request_plain", BedrockRequestBody(request));
}

TEST(BedrockGoldenTest, ToolRoundTripRequest) {
  Request request;  // no system prompt: the "system" field is left out
  request.messages.push_back(Message::User("Profile the kernel."));
  request.messages.push_back(
      Message::Assistant("", {{"tooluse_1", "run_ncu", Json{{"kernel", "k_swish"}}},
                              {"tooluse_2", "read_file", Json{{"path", "swish.cu"}}}}));
  request.messages.push_back(
      Message::Tool({"tooluse_1", "run_ncu", "dram__throughput 91%", false}));
  request.messages.push_back(Message::Tool({"tooluse_2", "read_file", "permission denied", true}));
  request.messages.push_back(Message::User("Now propose a fix."));
  request.tools.push_back(
      {"run_ncu", "Profiles one kernel with Nsight Compute",
       Json{{"type", "object"}, {"properties", {{"kernel", {{"type", "string"}}}}}}});
  request.tools.push_back(
      {"read_file", "Reads a source file",
       Json{{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}});
  request.tool_choice = ToolChoice::kNamed;
  request.tool_choice_name = "run_ncu";
  ExpectGolden("bedrock_request_tool_round_trip", BedrockRequestBody(request));
}

TEST(BedrockGoldenTest, StructuredRequest) {
  Request request = Ask("Rank the candidates.");
  request.response_schema =
      ResponseSchema{"ranking", Json{{"type", "array"}, {"items", {{"type", "string"}}}}};
  ExpectGolden("bedrock_request_structured", BedrockRequestBody(request));
}

}  // namespace llm_bedrock_test
}  // namespace kernelpro::llm
