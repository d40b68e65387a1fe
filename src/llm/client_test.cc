// The reliable client: which failures are retried and how long it waits, the bound on requests in
// flight, and the one report per logical request. The sleep seam records waits instead of
// sleeping, so the tests run instantly and can check every wait.
#include "llm/client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "llm/fake_server_testing.h"
#include "llm/json_http_backend_testing.h"
#include "llm/scripted_backend_testing.h"

namespace kernelpro::llm {
namespace llm_client_test {

using testing::ScriptedBackend;
using testing::TextResponse;

// Collects the waits the client asks for (thread-safe, as the client may wait on many threads).
struct WaitLog {
  std::mutex mu;
  std::vector<double> seconds;

  std::function<void(std::chrono::duration<double>)> Sleeper() {
    return [this](std::chrono::duration<double> d) {
      std::lock_guard<std::mutex> lock(mu);
      seconds.push_back(d.count());
    };
  }
};

Request Ask(const std::string& text) {
  Request r;
  r.messages.push_back(Message::User(text));
  return r;
}

struct Harness {
  ScriptedBackend* scripted = nullptr;
  std::unique_ptr<Backend> client;
  WaitLog waits;
  std::mutex exchanges_mu;
  std::vector<Exchange> exchanges;

  explicit Harness(ClientOptions options = {}) {
    auto backend = std::make_unique<ScriptedBackend>();
    scripted = backend.get();
    options.sleep = waits.Sleeper();
    if (!options.seed) options.seed = 1;
    options.on_exchange = [this](const Exchange& e) {
      std::lock_guard<std::mutex> lock(exchanges_mu);
      exchanges.push_back(e);
    };
    client = MakeReliableBackend(std::move(backend), std::move(options));
  }
};

TEST(ReliableClientTest, RateLimitIsRetriedAfterTheServersRetryAfter) {
  Harness h;
  h.scripted->Push(testing::ErrorWithRetryAfter(ErrorKind::kRateLimited, 429, 7));
  h.scripted->Push(TextResponse("hello"));
  Outcome out = h.client->Complete(Ask("hi"));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().text, "hello");
  EXPECT_EQ(out.response().attempts, 2);
  EXPECT_EQ(h.scripted->calls(), 2);
  // The jittered backoff (at most 1 s) is shorter, so the server's 7 s decides.
  ASSERT_EQ(h.waits.seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(h.waits.seconds[0], 7.0);
}

TEST(ReliableClientTest, RetryAfterIsCappedAtMaxRetryAfter) {
  ClientOptions options;
  options.max_retry_after = std::chrono::seconds(120);
  Harness h(options);
  h.scripted->Push(testing::ErrorWithRetryAfter(ErrorKind::kRateLimited, 429, 3600));
  h.scripted->Push(TextResponse("ok"));
  ASSERT_TRUE(h.client->Complete(Ask("hi")).ok());
  ASSERT_EQ(h.waits.seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(h.waits.seconds[0], 120.0);
}

TEST(ReliableClientTest, BackoffDoublesUpToTheCapAndGivesUpAfterMaxAttempts) {
  ClientOptions options;
  options.jitter = false;
  options.max_attempts = 6;
  options.max_backoff = std::chrono::seconds(5);
  Harness h(options);
  for (int i = 0; i < 6; ++i) h.scripted->Push(MakeError(ErrorKind::kServer, "overloaded", 503));
  Outcome out = h.client->Complete(Ask("hi"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kServer);
  EXPECT_EQ(out.error().attempts, 6);
  EXPECT_EQ(out.error().ToString(), "server error (HTTP 503) after 6 attempts: overloaded");
  EXPECT_EQ(h.scripted->calls(), 6);
  EXPECT_EQ(h.waits.seconds, (std::vector<double>{1, 2, 4, 5, 5}));  // no wait after the last
}

// Full jitter: each wait is uniform in [0, backoff], so over many requests the waits fill the
// whole interval, and a fixed seed reproduces them exactly.
TEST(ReliableClientTest, FullJitterSpreadsWaitsOverZeroToTheBackoff) {
  auto run = [](std::uint64_t seed) {
    ClientOptions options;
    options.seed = seed;
    Harness h(options);
    for (int i = 0; i < 200; ++i) {
      for (int k = 0; k < 3; ++k) h.scripted->Push(MakeError(ErrorKind::kConnection, "reset"));
      h.scripted->Push(TextResponse("ok"));
      EXPECT_TRUE(h.client->Complete(Ask("hi")).ok());
    }
    return h.waits.seconds;
  };
  std::vector<double> waits = run(7);
  ASSERT_EQ(waits.size(), 600u);
  const double bounds[3] = {1, 2, 4};
  for (int k = 0; k < 3; ++k) {
    double low = bounds[k], high = 0;
    for (size_t i = k; i < waits.size(); i += 3) {
      EXPECT_GE(waits[i], 0.0);
      EXPECT_LE(waits[i], bounds[k]);
      low = std::min(low, waits[i]);
      high = std::max(high, waits[i]);
    }
    EXPECT_LT(low, 0.1 * bounds[k]) << "retry " << k + 1;
    EXPECT_GT(high, 0.9 * bounds[k]) << "retry " << k + 1;
  }
  EXPECT_EQ(run(7), waits);
  EXPECT_NE(run(8), waits);
}

TEST(ReliableClientTest, ConnectionFailuresTimeoutsAndServerErrorsAreRetried) {
  Harness h;
  h.scripted->Push(MakeError(ErrorKind::kConnection, "connection refused"));
  h.scripted->Push(MakeError(ErrorKind::kTimeout, "timed out"));
  h.scripted->Push(MakeError(ErrorKind::kServer, "bad gateway", 502));
  h.scripted->Push(TextResponse("finally"));
  Outcome out = h.client->Complete(Ask("hi"));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().text, "finally");
  EXPECT_EQ(out.response().attempts, 4);
  EXPECT_EQ(h.waits.seconds.size(), 3u);
}

TEST(ReliableClientTest, ErrorsThatRetryingCannotFixReturnAtOnce) {
  for (Error e :
       {MakeError(ErrorKind::kBadRequest, "max_tokens too large", 400),
        MakeError(ErrorKind::kAuth, "invalid key", 401),
        MakeError(ErrorKind::kMalformed, "not JSON"), MakeError(ErrorKind::kConfig, "no model")}) {
    Harness h;
    h.scripted->Push(e);
    h.scripted->Push(TextResponse("must not be reached"));
    Outcome out = h.client->Complete(Ask("hi"));
    ASSERT_FALSE(out.ok()) << ToString(e.kind);
    EXPECT_EQ(out.error().kind, e.kind);
    EXPECT_EQ(out.error().attempts, 1);
    EXPECT_EQ(h.scripted->calls(), 1) << ToString(e.kind);
    EXPECT_TRUE(h.waits.seconds.empty());
  }
}

// With a limit of 3, the first three calls wait inside the backend until all three are there
// (so the limit is reached), then linger: were the bound broken, the other callers would enter
// meanwhile and push the peak above 3.
TEST(ReliableClientTest, AtMostMaxConcurrencyRequestsAreInFlight) {
  constexpr int kLimit = 3, kCallers = 10;
  ClientOptions options;
  options.max_concurrency = kLimit;
  Harness h(options);
  std::mutex mu;
  std::condition_variable changed;
  int in_flight = 0, peak = 0;
  bool first_wave_done = false;
  h.scripted->on_call = [&](const Request&) {
    std::unique_lock<std::mutex> lock(mu);
    peak = std::max(peak, ++in_flight);
    changed.notify_all();
    if (!first_wave_done) {
      changed.wait_for(lock, std::chrono::seconds(10),
                       [&] { return in_flight >= kLimit || first_wave_done; });
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      lock.lock();
      first_wave_done = true;
      changed.notify_all();
    }
    --in_flight;
  };
  for (int i = 0; i < kCallers; ++i) h.scripted->Push(TextResponse("ok"));
  std::vector<std::thread> callers;
  std::atomic<int> succeeded{0};
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      if (h.client->Complete(Ask("hi")).ok()) ++succeeded;
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(succeeded.load(), kCallers);
  EXPECT_EQ(peak, kLimit);
}

TEST(ReliableClientTest, HookReportsEachLogicalRequestOnceWithTokensCostAndAttempts) {
  ClientOptions options;
  options.prices.Set({"scripted-*", 3.0, 15.0});
  Harness h(options);
  h.scripted->Push(MakeError(ErrorKind::kRateLimited, "slow down", 429));
  h.scripted->Push(MakeError(ErrorKind::kServer, "oops", 500));
  h.scripted->Push(TextResponse("answer", {1000, 2000}));
  auto before = std::chrono::system_clock::now();
  ASSERT_TRUE(h.client->Complete(Ask("first")).ok());
  h.scripted->Push(MakeError(ErrorKind::kAuth, "bad key", 401));
  ASSERT_FALSE(h.client->Complete(Ask("second")).ok());

  ASSERT_EQ(h.exchanges.size(), 2u);
  const Exchange& ok = h.exchanges[0];
  EXPECT_EQ(ok.provider, "scripted");
  EXPECT_EQ(ok.model, "scripted-model");
  EXPECT_EQ(ok.request.messages[0].text, "first");
  ASSERT_TRUE(ok.response.has_value());
  EXPECT_FALSE(ok.error.has_value());
  EXPECT_EQ(ok.response->text, "answer");
  EXPECT_EQ(ok.attempts, 3);
  EXPECT_EQ(ok.usage.input_tokens, 1000);
  EXPECT_EQ(ok.usage.output_tokens, 2000);
  EXPECT_TRUE(ok.cost_known);
  EXPECT_DOUBLE_EQ(ok.cost_usd, (1000 * 3.0 + 2000 * 15.0) / 1e6);
  EXPECT_GE(ok.started, before - std::chrono::seconds(1));
  EXPECT_GE(ok.latency_ms, 0);

  const Exchange& failed = h.exchanges[1];
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_FALSE(failed.response.has_value());
  EXPECT_EQ(failed.error->kind, ErrorKind::kAuth);
  EXPECT_EQ(failed.attempts, 1);
  EXPECT_EQ(failed.cost_usd, 0);
}

TEST(ReliableClientTest, UnpricedModelCostsZeroAndSaysSo) {
  Harness h;  // empty price table
  h.scripted->Push(TextResponse("answer", {500, 500}));
  ASSERT_TRUE(h.client->Complete(Ask("hi")).ok());
  ASSERT_EQ(h.exchanges.size(), 1u);
  EXPECT_FALSE(h.exchanges[0].cost_known);
  EXPECT_EQ(h.exchanges[0].cost_usd, 0);
  EXPECT_EQ(h.exchanges[0].usage.output_tokens, 500);
}

// The real libcurl transport against a local HTTP server: a real 429 with a Retry-After header,
// then success.
TEST(ReliableClientIntegrationTest, RealRateLimitWithRetryAfterThenSuccess) {
  testing::FakeServer server;
  testing::ScriptedReply limited =
      testing::ScriptedReply::Json(Json{{"error", {{"message", "Rate limit reached"}}}}, 429);
  limited.headers.insert({"Retry-After", "2"});
  server.Reply(limited);
  server.ReplyJson(ToJson(TextResponse("served", {11, 22})));
  WaitLog waits;
  ClientOptions options;
  options.sleep = waits.Sleeper();
  auto client = MakeReliableBackend(
      std::make_unique<testing::JsonHttpBackend>(server.BaseUrl(), "k"), std::move(options));
  Outcome out = client->Complete(Ask("hi"));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().text, "served");
  EXPECT_EQ(out.response().usage.output_tokens, 22);
  EXPECT_EQ(out.response().attempts, 2);
  EXPECT_EQ(waits.seconds, (std::vector<double>{2.0}));
  auto received = server.Received();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0].body, received[1].body);  // the retry sends the same request
}

TEST(ReliableClientIntegrationTest, StalledServerTimesOutIsRetriedThenFailsAsTimeout) {
  testing::FakeServer server;
  for (int i = 0; i < 2; ++i) {
    testing::ScriptedReply stalled = testing::ScriptedReply::Json(Json::object());
    stalled.stall = std::chrono::milliseconds(1000);
    server.Reply(stalled);
  }
  WaitLog waits;
  ClientOptions options;
  options.max_attempts = 2;
  options.sleep = waits.Sleeper();
  auto client = MakeReliableBackend(std::make_unique<testing::JsonHttpBackend>(
                                        server.BaseUrl(), "k", std::chrono::milliseconds(200)),
                                    std::move(options));
  Outcome out = client->Complete(Ask("hi"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kTimeout) << out.error().ToString();
  EXPECT_EQ(out.error().attempts, 2);
  EXPECT_EQ(server.Received().size(), 2u);
  EXPECT_EQ(waits.seconds.size(), 1u);
}

}  // namespace llm_client_test
}  // namespace kernelpro::llm
