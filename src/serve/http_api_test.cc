// The API on a real loopback socket, with a fake evaluator: what a client sees for good and bad
// requests, tokens, async jobs, concurrent clients and a drain.
#include "serve/http_api.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>
#include <vector>

#include "serve/fake_evaluator_testing.h"

namespace kernelpro::serve {
namespace serve_http_api_test {

using testing::FakeEvaluator;

// Takes "timing_trials" only; anything else is unknown, as the real one says of a typo.
class FakeOptions : public RequestOptions {
 public:
  Result<eval::EvalOptions> Resolve(const Json& options) const override {
    eval::EvalOptions o;
    for (const auto& [key, value] : options.items()) {
      if (key != "timing_trials") return Status::InvalidArgument("unknown option '" + key + "'");
      o.timing_trials = value.get<int>();
    }
    return o;
  }
};

class EvalApiTest : public ::testing::Test {
 protected:
  void Start(std::size_t slots = 1, std::string token = "", std::size_t max_body = 1 << 20) {
    evaluator_ = std::make_unique<FakeEvaluator>(slots);
    queue_ = std::make_unique<JobQueue>(*evaluator_, nullptr, metrics_, QueueOptions{});
    ApiConfig config;
    config.token = std::move(token);
    config.max_body_bytes = max_body;
    config.facts = Json{{"version", "test"}, {"device", "cpu"}};
    api_ = std::make_unique<EvalApi>(config, *queue_, options_, metrics_);
    auto port = api_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
    server_ = std::thread([this] { api_->Run(); });
  }
  void TearDown() override {
    if (evaluator_) evaluator_->Release();
    if (api_) api_->Stop();
    if (server_.joinable()) server_.join();
  }
  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(30, 0);
    return client;
  }
  static std::string Body(const std::string& candidate, Json options = Json::object(),
                          bool async = false) {
    Json body{{"problem_source", "class Model: ..."},
              {"candidate_source", candidate},
              {"options", options}};
    if (async) body["async"] = true;
    return body.dump();
  }
  // POSTs `body` to /v1/eval; the status and the parsed answer.
  std::pair<int, Json> Post(const std::string& body, const httplib::Headers& headers = {}) {
    httplib::Client client = Client();
    auto res = client.Post("/v1/eval", headers, body, "application/json");
    if (!res) return {-1, Json()};
    return {res->status, Json::parse(res->body, nullptr, false)};
  }

  ServeMetrics metrics_;
  FakeOptions options_;
  std::unique_ptr<FakeEvaluator> evaluator_;
  std::unique_ptr<JobQueue> queue_;
  std::unique_ptr<EvalApi> api_;
  std::thread server_;
  int port_ = 0;
};

TEST_F(EvalApiTest, ASyncEvaluationAnswersWithTheVerdictAndItsJob) {
  Start();
  httplib::Client client = Client();
  auto res = client.Post("/v1/eval", Body("fine", {{"timing_trials", 7}}), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  Json verdict = Json::parse(res->body);
  EXPECT_EQ(verdict["status"], "correct");
  EXPECT_EQ(verdict["timing_trials"], 7) << "the request's options reach the evaluation";
  EXPECT_EQ(res->get_header_value("X-Kernelpro-Job"), verdict["job"]);

  auto job = client.Get(("/v1/jobs/" + verdict["job"].get<std::string>()).c_str());
  ASSERT_TRUE(job);
  EXPECT_EQ(job->status, 200);
  EXPECT_EQ(Json::parse(job->body)["result"], verdict);
}

TEST_F(EvalApiTest, AnAsyncEvaluationIsAJobToPoll) {
  Start();
  auto [code, accepted] = Post(Body("sleep:50", Json::object(), /*async=*/true));
  EXPECT_EQ(code, 202);
  EXPECT_EQ(accepted["state"], "queued");
  const std::string path = "/v1/jobs/" + accepted["job"].get<std::string>();
  httplib::Client client = Client();
  Json state;
  for (int i = 0; i < 500; ++i) {
    state = Json::parse(client.Get(path.c_str())->body);
    if (state["state"] == "done") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(state["state"], "done");
  EXPECT_EQ(state["result"]["status"], "correct");
  auto unknown = client.Get("/v1/jobs/0123456789abcdef");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(Json::parse(unknown->body)["error"], "no such job: 0123456789abcdef");
}

TEST_F(EvalApiTest, BadRequestsAreOneLineErrorsAndTheServerGoesOn) {
  Start(1, "", /*max_body=*/4096);
  auto error_of = [&](const std::string& body) {
    auto [code, answer] = Post(body);
    return std::to_string(code) + " " + answer.value("error", std::string("<none>"));
  };
  EXPECT_EQ(error_of("{not json"), "400 the body is not a JSON object");
  EXPECT_EQ(error_of("[1, 2]"), "400 the body is not a JSON object");
  EXPECT_EQ(error_of(R"({"candidate_source": "x"})"),
            "400 problem_source is required: the file's text");
  EXPECT_EQ(error_of(R"({"problem_source": "p", "candidate_source": 3})"),
            "400 candidate_source is required: the file's text");
  EXPECT_EQ(error_of(R"({"problem_source": "p", "candidate_source": "c", "option": {}})"),
            "400 unknown field 'option' (fields: problem_source, candidate_source, options, "
            "async)");
  EXPECT_EQ(error_of(Body("c", {{"timing_trails", 5}})), "400 unknown option 'timing_trails'");
  EXPECT_EQ(error_of(R"({"problem_source": "p", "candidate_source": "c", "options": 5})"),
            "400 options must be an object of `kernelpro eval` options");
  EXPECT_EQ(error_of(Body("problem-error")), "422 problem error: no Model");
  EXPECT_EQ(error_of(Body("server-error")), "500 the worker could not start");
  EXPECT_EQ(error_of(Body(std::string(8000, 'x'))), "413 the request body is over 4096 bytes");

  httplib::Client client = Client();
  auto unknown = client.Get("/v2/anything");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(Json::parse(unknown->body)["error"], "no such route: GET /v2/anything");
  EXPECT_EQ(Post(Body("fine")).first, 200) << "still serving";
}

TEST_F(EvalApiTest, WithATokenEveryRouteButHealthWantsIt) {
  Start(1, "s3cret");
  EXPECT_EQ(Post(Body("fine")).first, 401);
  EXPECT_EQ(Post(Body("fine"), {{"Authorization", "Bearer wrong"}}).first, 401);
  EXPECT_EQ(Post(Body("fine"), {{"Authorization", "s3cret"}}).first, 401);
  EXPECT_EQ(Post(Body("fine"), {{"Authorization", "Bearer s3cret"}}).first, 200);
  httplib::Client client = Client();
  EXPECT_EQ(client.Get("/v1/metrics")->status, 401);
  EXPECT_EQ(client.Get("/v1/jobs/00ff")->status, 401);
  auto health = client.Get("/v1/health");
  EXPECT_EQ(health->status, 200);
  Json facts = Json::parse(health->body);
  EXPECT_EQ(facts["status"], "ok");
  EXPECT_EQ(facts["device"], "cpu");
  EXPECT_EQ(facts["queue_depth"], 0);
}

TEST_F(EvalApiTest, ConcurrentClientsAllGetVerdictsWithOneJobPerSlot) {
  Start(2);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&] {
      if (Post(Body("sleep:20")).first == 200) ++ok;
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(evaluator_->max_running(), 2);
  // A request is counted once its answer is written, a moment after its client has it.
  const std::string counted = "kernelpro_requests_total{route=\"eval\",code=\"200\"} 8";
  std::string page;
  for (int i = 0; i < 200 && page.find(counted) == std::string::npos; ++i) {
    page = Client().Get("/v1/metrics")->body;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(page.find(counted), std::string::npos) << page;
}

TEST_F(EvalApiTest, WhileDrainingNewEvaluationsAre503AndTheRunningOneFinishes) {
  Start();
  std::pair<int, Json> running;
  std::thread first([&] { running = Post(Body("block")); });
  while (evaluator_->started() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto [queued_code, queued] = Post(Body("fine", Json::object(), /*async=*/true));
  ASSERT_EQ(queued_code, 202);
  std::thread drain([&] { queue_->Drain(); });
  while (!queue_->Gauges().draining) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto [code, refused] = Post(Body("fine"));
  EXPECT_EQ(code, 503);
  EXPECT_EQ(refused["error"], "the server is shutting down and takes no new evaluations");
  auto health = Client().Get("/v1/health");
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(Json::parse(health->body)["status"], "draining");
  auto cancelled = Client().Get(("/v1/jobs/" + queued["job"].get<std::string>()).c_str());
  EXPECT_EQ(Json::parse(cancelled->body)["state"], "cancelled");
  evaluator_->Release();
  drain.join();
  first.join();
  EXPECT_EQ(running.first, 200);
  EXPECT_EQ(running.second["status"], "correct");
}

TEST(BearerMatchesTest, OnlyTheExactTokenAfterBearerMatches) {
  EXPECT_TRUE(BearerMatches("Bearer abc", "abc"));
  EXPECT_FALSE(BearerMatches("Bearer abcd", "abc"));
  EXPECT_FALSE(BearerMatches("bearer abc", "abc"));
  EXPECT_FALSE(BearerMatches("abc", "abc"));
  EXPECT_FALSE(BearerMatches("Bearer ", "")) << "no token configured never matches";
}

}  // namespace serve_http_api_test
}  // namespace kernelpro::serve
