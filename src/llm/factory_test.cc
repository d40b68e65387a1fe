// MakeBackend: one config gives the whole stack: provider, retries, truncation recovery,
// recording; a recorded cassette replays the same answers with no server; missing credentials are
// errors before anything is sent.
#include "llm/factory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "llm/fake_server_testing.h"

namespace kernelpro::llm {
namespace llm_factory_test {

using testing::FakeServer;

Json Answer(const std::string& text, const char* finish, int in, int out) {
  return {{"model", "m"},
          {"choices",
           {{{"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", finish}}}},
          {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}}}};
}

EnvLookup NoEnvironment() {
  return [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
}

Request Ask(const std::string& text) {
  Request r;
  r.messages.push_back(Message::User(text));
  r.max_tokens = 100;
  return r;
}

TEST(MakeBackendTest, RecordsWhatTheCallerGotAndReplaysItWithoutTheServer) {
  const std::string cassette = ::testing::TempDir() + "/factory.cassette.jsonl";
  std::filesystem::remove(cassette);
  std::vector<Exchange> exchanges;
  {
    FakeServer server;
    server.ReplyJson(Answer("first half", "length", 10, 100));  // cut off: recovery doubles
    server.ReplyJson(Answer("whole answer", "stop", 10, 150));
    LlmConfig c = *ParseLlmSpec("openai:m@" + server.BaseUrl() + "/v1");
    c.record_to = cassette;
    BackendDependencies deps;
    deps.env = NoEnvironment();
    deps.on_exchange = [&](const Exchange& e) { exchanges.push_back(e); };
    auto backend = MakeBackend(c, deps);
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    Outcome got = (*backend)->Complete(Ask("write a kernel"));
    ASSERT_TRUE(got.ok()) << got.error().ToString();
    EXPECT_EQ(got.response().text, "whole answer");
    auto sent = server.Received();
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[1].JsonBody()["max_tokens"], 200) << "truncation recovery doubles the budget";
  }
  ASSERT_EQ(exchanges.size(), 2u) << "both paid exchanges are reported";
  EXPECT_EQ(exchanges[0].usage.output_tokens, 100);

  // The server is gone; the cassette answers the same request the same way.
  LlmConfig replay = *ParseLlmSpec("replay:" + cassette);
  BackendDependencies deps;
  deps.env = NoEnvironment();
  auto backend = MakeBackend(replay, deps);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  Outcome again = (*backend)->Complete(Ask("write a kernel"));
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ(again.response().text, "whole answer");
  Outcome other = (*backend)->Complete(Ask("something else"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind, ErrorKind::kReplayMiss);
}

TEST(MakeBackendTest, TruncationRecoveryCanBeLeftOut) {
  FakeServer server;
  server.ReplyJson(Answer("cut", "length", 5, 100));
  BackendDependencies deps;
  deps.env = NoEnvironment();
  deps.recover_truncation = false;
  auto backend = MakeBackend(*ParseLlmSpec("openai:m@" + server.BaseUrl() + "/v1"), deps);
  ASSERT_TRUE(backend.ok());
  Outcome got = (*backend)->Complete(Ask("hi"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.response().stop_reason, FinishReason::kLength);
  EXPECT_EQ(server.Received().size(), 1u);
}

TEST(MakeBackendTest, PricesTurnTokensIntoCost) {
  FakeServer server;
  server.ReplyJson(Answer("ok", "stop", 1'000'000, 500'000));
  const std::string prices = ::testing::TempDir() + "/prices.toml";
  std::ofstream(prices) << "[models.\"m\"]\ninput_per_mtok = 2.0\noutput_per_mtok = 8.0\n";
  LlmConfig c = *ParseLlmSpec("openai:m@" + server.BaseUrl() + "/v1");
  c.prices_file = prices;
  double cost = -1;
  BackendDependencies deps;
  deps.env = NoEnvironment();
  deps.on_exchange = [&](const Exchange& e) { cost = e.cost_usd; };
  auto backend = MakeBackend(c, deps);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ASSERT_TRUE((*backend)->Complete(Ask("hi")).ok());
  EXPECT_DOUBLE_EQ(cost, 2.0 + 4.0);
}

TEST(MakeBackendTest, MissingCredentialsAreErrorsBeforeAnythingIsSent) {
  BackendDependencies deps;
  deps.env = NoEnvironment();
  auto openai = MakeBackend(*ParseLlmSpec("openai:gpt-4o"), deps);
  ASSERT_FALSE(openai.ok());
  EXPECT_NE(openai.status().message().find("OPENAI_API_KEY"), std::string::npos);
  LlmConfig named = *ParseLlmSpec("anthropic:claude");
  named.api_key_env = "TEAM_KEY";
  auto anthropic = MakeBackend(named, deps);
  ASSERT_FALSE(anthropic.ok());
  EXPECT_NE(anthropic.status().message().find("TEAM_KEY"), std::string::npos);
  auto bedrock = MakeBackend(*ParseLlmSpec("bedrock:anthropic.claude-v1:0"), deps);
  ASSERT_FALSE(bedrock.ok());
  EXPECT_NE(bedrock.status().message().find("no region"), std::string::npos);
  auto replay = MakeBackend(*ParseLlmSpec("replay:/no/such/cassette.jsonl"), deps);
  EXPECT_FALSE(replay.ok());
}

// Answers every request with one completion and keeps what it was sent: a network that would
// carry a key anywhere, to show what MakeBackend lets through.
class KeptRequestsTransport : public HttpTransport {
 public:
  HttpResult Send(const HttpRequest& request) override {
    sent.push_back(request);
    HttpResponse response;
    response.status = 200;
    response.body = Answer("ok", "stop", 1, 1).dump();
    return response;
  }
  std::string Header(size_t i, const std::string& name) const {
    for (const auto& [k, v] : sent.at(i).headers) {
      if (k == name) return v;
    }
    return "";
  }
  std::vector<HttpRequest> sent;
};

EnvLookup Environment(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(MakeBackendTest, AKeyIsNeverSentOverPlainHttpToAnotherHost) {
  auto network = std::make_shared<KeptRequestsTransport>();
  BackendDependencies deps;
  deps.env = Environment({{"OPENAI_API_KEY", "sk-test"},
                          {"ANTHROPIC_API_KEY", "ak-test"},
                          {"AWS_REGION", "us-east-1"},
                          {"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"},
                          {"AWS_SECRET_ACCESS_KEY", "secret"}});
  deps.transport = network;
  auto openai = MakeBackend(*ParseLlmSpec("openai:m@http://192.0.2.10:8000/v1"), deps);
  ASSERT_FALSE(openai.ok());
  EXPECT_EQ(openai.status().message(),
            "openai: refusing to send OPENAI_API_KEY over plain http to http://192.0.2.10:8000/v1: "
            "use https, a loopback address (127.0.0.1, ::1, localhost), or name this base_url in "
            "an --llm-config profile with allow_insecure_key = true");
  auto anthropic = MakeBackend(*ParseLlmSpec("anthropic:claude@http://llm.lab.example"), deps);
  ASSERT_FALSE(anthropic.ok());
  EXPECT_NE(anthropic.status().message().find("refusing to send ANTHROPIC_API_KEY over plain "
                                              "http to http://llm.lab.example"),
            std::string::npos)
      << anthropic.status().message();
  auto bedrock =
      MakeBackend(*ParseLlmSpec("bedrock:anthropic.claude-v1:0@http://192.0.2.11"), deps);
  ASSERT_FALSE(bedrock.ok());
  EXPECT_NE(bedrock.status().message().find("refusing to send AWS credentials over plain http"),
            std::string::npos)
      << bedrock.status().message();
  EXPECT_TRUE(network->sent.empty()) << "nothing may reach the network";
  // https anywhere is fine.
  auto secure = MakeBackend(*ParseLlmSpec("openai:m@https://192.0.2.10:8443/v1"), deps);
  ASSERT_TRUE(secure.ok()) << secure.status().ToString();
  ASSERT_TRUE((*secure)->Complete(Ask("hi")).ok());
  EXPECT_EQ(network->Header(0, "Authorization"), "Bearer sk-test");
}

TEST(MakeBackendTest, AKeyGoesOverPlainHttpToThisMachine) {
  FakeServer server;
  server.ReplyJson(Answer("local", "stop", 1, 1));
  BackendDependencies deps;
  deps.env = Environment({{"OPENAI_API_KEY", "sk-local"}});
  auto local = MakeBackend(*ParseLlmSpec("openai:m@" + server.BaseUrl() + "/v1"), deps);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  ASSERT_TRUE((*local)->Complete(Ask("hi")).ok());
  ASSERT_EQ(server.Received().size(), 1u);
  EXPECT_EQ(server.Received()[0].Header("Authorization"), "Bearer sk-local");
}

TEST(MakeBackendTest, AProfileThatNamesThePlainHttpUrlMayAllowTheKeyThere) {
  const std::string path = ::testing::TempDir() + "/factory_lab.toml";
  std::ofstream(path) << "[profiles.lab]\nprovider = \"openai\"\nmodel = \"m\"\n"
                         "base_url = \"http://192.0.2.10:8000/v1\"\napi_key_env = \"LAB_KEY\"\n"
                         "allow_insecure_key = true\n";
  auto network = std::make_shared<KeptRequestsTransport>();
  BackendDependencies deps;
  deps.env = Environment({{"LAB_KEY", "lab-secret"}});
  deps.transport = network;
  auto config = LoadLlmProfile(path, "lab");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto backend = MakeBackend(*config, deps);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ASSERT_TRUE((*backend)->Complete(Ask("hi")).ok());
  ASSERT_EQ(network->sent.size(), 1u);
  EXPECT_EQ(network->sent[0].url, "http://192.0.2.10:8000/v1/chat/completions");
  EXPECT_EQ(network->Header(0, "Authorization"), "Bearer lab-secret");
}

TEST(MakeBackendTest, AKeylessServerIsNeverRefused) {
  auto network = std::make_shared<KeptRequestsTransport>();
  BackendDependencies deps;
  deps.env = NoEnvironment();
  deps.transport = network;
  auto backend = MakeBackend(*ParseLlmSpec("openai:m@http://192.0.2.10:8000/v1"), deps);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ASSERT_TRUE((*backend)->Complete(Ask("hi")).ok());
  ASSERT_EQ(network->sent.size(), 1u);
  EXPECT_EQ(network->Header(0, "Authorization"), "");
}

TEST(CheckServerReachableTest, AnyAnswerIsReachableAndNoKeyIsSent) {
  FakeServer server;  // answers 500 to everything unscripted: still a server that is there
  auto transport = MakeCurlTransport();
  auto config = ParseLlmSpec("openai:m@" + server.BaseUrl() + "/v1");
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(CheckServerReachable(*config, *transport).ok());
  ASSERT_EQ(server.Received().size(), 1u);
  EXPECT_EQ(server.Received()[0].method, "GET");
  EXPECT_EQ(server.Received()[0].path, "/v1/models");
  EXPECT_EQ(server.Received()[0].Header("Authorization"), "");
}

TEST(CheckServerReachableTest, AServerThatIsNotThereIsNamedWithItsUrl) {
  auto transport = MakeCurlTransport();
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::ClosedPort()) + "/v1";
  Status s = CheckServerReachable(*ParseLlmSpec("openai:m@" + url), *transport);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_TRUE(s.message().starts_with("cannot reach the model's server at " + url + "/models: "))
      << s.message();
}

TEST(CheckServerReachableTest, ACassetteIsNotProbed) {
  auto network = std::make_shared<KeptRequestsTransport>();
  EXPECT_TRUE(CheckServerReachable(*ParseLlmSpec("replay:x.jsonl"), *network).ok());
  EXPECT_TRUE(network->sent.empty());
}

}  // namespace llm_factory_test
}  // namespace kernelpro::llm
