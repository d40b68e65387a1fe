// `kernelpro llm ping` as a user runs it, against in-process servers speaking each provider's
// protocol: the reply with its numbers, retries, clear errors, and the same tool-calling round
// trip on OpenAI-compatible, Anthropic and Bedrock endpoints.
#include <gtest/gtest.h>

#include "cli/cli_testing.h"
#include "llm/fake_server_testing.h"

namespace kernelpro::cli {
namespace cli_llm_command_test {

using llm::testing::FakeServer;
using llm::testing::ScriptedReply;
using testing::CliRun;

// No test may reach a real key or endpoint from the developer's environment.
const std::vector<std::string> kUnset = {
    "OPENAI_API_KEY",    "ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN", "AWS_PROFILE",       "KERNELPRO_LLM",     "KERNELPRO_LLM_CONFIG",
    "AWS_REGION",        "AWS_DEFAULT_REGION"};

CliRun Ping(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), {"llm", "ping"});
  return testing::RunKernelpro(args, 2, env, kUnset);
}

Json OpenAiAnswer(const std::string& text, int in, int out, const char* finish = "stop") {
  return {{"model", "gemma-3-270m"},
          {"choices",
           {{{"index", 0},
             {"message", {{"role", "assistant"}, {"content", text}}},
             {"finish_reason", finish}}}},
          {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}}}};
}

TEST(LlmPingTest, PrintsTheReplyWithLatencyTokensAndAttempts) {
  FakeServer server;
  server.ReplyJson(OpenAiAnswer("pong", 16, 2));
  CliRun r = Ping({"--llm", "openai:gemma-3-270m@" + server.BaseUrl() + "/v1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.json["text"], "pong");
  EXPECT_EQ(r.json["input_tokens"], 16);
  EXPECT_EQ(r.json["output_tokens"], 2);
  EXPECT_EQ(r.json["attempts"], 1);
  EXPECT_GT(r.json["latency_ms"].get<double>(), 0);
  EXPECT_EQ(r.json["stop_reason"], "end");
  ASSERT_EQ(server.Received().size(), 1u);
  EXPECT_EQ(server.Received()[0].path, "/v1/chat/completions");
  EXPECT_EQ(server.Received()[0].Header("Authorization"), "") << "no key was configured";

  server.ReplyJson(OpenAiAnswer("pong", 16, 2));
  CliRun text = Ping({"--llm", "openai:gemma-3-270m@" + server.BaseUrl() + "/v1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("reply: pong\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("16 input + 2 output tokens, 1 attempt, stop: end"), std::string::npos)
      << text.out;
}

TEST(LlmPingTest, RateLimitedThenAnsweredCountsBothAttemptsAndSendsTheKey) {
  FakeServer server;
  ScriptedReply limited =
      ScriptedReply::Json(Json{{"error", {{"message", "Rate limit reached for requests"}}}}, 429);
  limited.headers.insert({"Retry-After", "0"});
  server.Reply(limited);
  server.ReplyJson(OpenAiAnswer("pong", 10, 1));
  CliRun r = Ping({"--llm", "openai:gpt-test@" + server.BaseUrl() + "/v1", "--json"},
                  {{"OPENAI_API_KEY", "sk-test-123"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.json["attempts"], 2);
  EXPECT_EQ(server.Received().at(1).Header("Authorization"), "Bearer sk-test-123");
  EXPECT_EQ(r.out.find("sk-test-123"), std::string::npos) << "keys are never printed";
}

TEST(LlmPingTest, ErrorsSayWhatWentWrong) {
  CliRun none = Ping({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no model chosen"), std::string::npos) << none.err;
  CliRun no_key = Ping({"--llm", "openai:gpt-4o"});
  EXPECT_EQ(no_key.exit_code, 2);
  EXPECT_NE(no_key.err.find("set OPENAI_API_KEY"), std::string::npos) << no_key.err;
  CliRun bad = Ping({"--llm", "gemini:pro"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown provider 'gemini'"), std::string::npos) << bad.err;

  FakeServer server;
  server.ReplyJson(Json{{"error", {{"message", "max_tokens is too large"}}}}, 400);
  CliRun rejected = Ping({"--llm", "openai:m@" + server.BaseUrl() + "/v1", "--json"});
  EXPECT_EQ(rejected.exit_code, 1);
  EXPECT_EQ(rejected.json["error"]["kind"], "bad_request");
  EXPECT_EQ(rejected.json["attempts"], 1) << "a rejected request is not retried";
  EXPECT_NE(
      rejected.json["error"]["description"].get<std::string>().find("max_tokens is too large"),
      std::string::npos);

  ScriptedReply garbage;
  garbage.body = "<html>502 Bad Gateway</html>";
  garbage.content_type = "text/html";
  server.Reply(garbage);
  CliRun malformed = Ping({"--llm", "openai:m@" + server.BaseUrl() + "/v1"});
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_NE(malformed.out.find("error: malformed response"), std::string::npos) << malformed.out;
}

TEST(LlmPingTest, AKeyIsNotSentOverPlainHttpToAnotherHostFromTheCommandLine) {
  // Nothing listens at 192.0.2.10: the refusal comes before any connection.
  CliRun refused =
      Ping({"--llm", "openai:m@http://192.0.2.10:8000/v1"}, {{"OPENAI_API_KEY", "sk-test-123"}});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("refusing to send OPENAI_API_KEY over plain http to "
                             "http://192.0.2.10:8000/v1: use https, a loopback address"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("sk-test-123"), std::string::npos) << "keys are never printed";
  // Numbers are checked too: a token budget is a whole number >= 1.
  CliRun tokens = Ping({"--llm", "openai:m@http://127.0.0.1:9/v1", "--max-tokens", "nan"});
  EXPECT_EQ(tokens.exit_code, 2);
  EXPECT_NE(tokens.err.find("--max-tokens: 'nan' is not accepted: give a whole number from 1"),
            std::string::npos)
      << tokens.err;
}

// One scripted provider: how it asks for add(2, 3), how it answers, and where the tool result
// sits in the request that follows.
struct ProviderScript {
  std::string name, spec_prefix, path_suffix;
  std::map<std::string, std::string> env;
  Json tool_call, answer;
  std::function<std::string(const Json& second_request)> tool_result_in;
};

// Printed in test names as its name, not its bytes: ctest's names (and its cost data) stay the
// same from build to build.
void PrintTo(const ProviderScript& p, std::ostream* os) { *os << p.name; }

class ToolCallOnEveryProviderTest : public ::testing::TestWithParam<ProviderScript> {};

TEST_P(ToolCallOnEveryProviderTest, TheToolRunsAndItsResultGoesBack) {
  const ProviderScript& p = GetParam();
  FakeServer server;
  server.ReplyJson(p.tool_call);
  server.ReplyJson(p.answer);
  CliRun r = Ping(
      {"--llm", p.spec_prefix + "@" + server.BaseUrl() + p.path_suffix, "--tool-call", "--json"},
      p.env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(r.json["tool_calls"].size(), 1u) << r.out;
  EXPECT_EQ(r.json["tool_calls"][0]["name"], "add");
  EXPECT_EQ(r.json["tool_calls"][0]["result"], "5");
  EXPECT_EQ(r.json["text"], "2 + 3 = 5");
  EXPECT_EQ(r.json["turns"], 2);
  auto got = server.Received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(p.tool_result_in(got[1].JsonBody()), "5") << got[1].body;
}

INSTANTIATE_TEST_SUITE_P(
    Providers, ToolCallOnEveryProviderTest,
    ::testing::Values(
        ProviderScript{
            "openai",
            "openai:m",
            "/v1",
            {},
            {{"choices",
              {{{"message",
                 {{"role", "assistant"},
                  {"content", nullptr},
                  {"tool_calls",
                   {{{"id", "call_1"},
                     {"type", "function"},
                     {"function", {{"name", "add"}, {"arguments", R"({"a": 2, "b": 3})"}}}}}}}},
                {"finish_reason", "tool_calls"}}}},
             {"usage", {{"prompt_tokens", 40}, {"completion_tokens", 9}}}},
            OpenAiAnswer("2 + 3 = 5", 60, 6),
            [](const Json& req) { return req["messages"].back()["content"].get<std::string>(); }},
        ProviderScript{"anthropic",
                       "anthropic:m",
                       "",
                       {{"ANTHROPIC_API_KEY", "test-key"}},
                       {{"content",
                         {{{"type", "tool_use"},
                           {"id", "toolu_1"},
                           {"name", "add"},
                           {"input", {{"a", 2}, {"b", 3}}}}}},
                        {"stop_reason", "tool_use"},
                        {"usage", {{"input_tokens", 40}, {"output_tokens", 9}}}},
                       {{"content", {{{"type", "text"}, {"text", "2 + 3 = 5"}}}},
                        {"stop_reason", "end_turn"},
                        {"usage", {{"input_tokens", 60}, {"output_tokens", 6}}}},
                       [](const Json& req) {
                         const Json& block = req["messages"].back()["content"][0];
                         return block["type"] == "tool_result" ? block["content"].get<std::string>()
                                                               : "";
                       }},
        ProviderScript{
            "bedrock",
            "bedrock:anthropic.claude-test-v1:0",
            "",
            {{"AWS_ACCESS_KEY_ID", "AKIDTEST"},
             {"AWS_SECRET_ACCESS_KEY", "secret"},
             {"AWS_REGION", "us-west-2"}},
            {{"output",
              {{"message",
                {{"role", "assistant"},
                 {"content",
                  {{{"toolUse",
                     {{"toolUseId", "tooluse_1"},
                      {"name", "add"},
                      {"input", {{"a", 2}, {"b", 3}}}}}}}}}}}},
             {"stopReason", "tool_use"},
             {"usage", {{"inputTokens", 40}, {"outputTokens", 9}}}},
            {{"output",
              {{"message", {{"role", "assistant"}, {"content", {{{"text", "2 + 3 = 5"}}}}}}}},
             {"stopReason", "end_turn"},
             {"usage", {{"inputTokens", 60}, {"outputTokens", 6}}}},
            [](const Json& req) {
              const Json& block = req["messages"].back()["content"][0];
              return block.contains("toolResult")
                         ? block["toolResult"]["content"][0]["text"].get<std::string>()
                         : "";
            }}),
    [](const ::testing::TestParamInfo<ProviderScript>& info) { return info.param.name; });

}  // namespace cli_llm_command_test
}  // namespace kernelpro::cli
