// The libcurl transport against a real local HTTP server: bodies and headers both ways, timeouts,
// refused connections, and how HTTP statuses become error kinds.
#include "llm/http.h"

#include <gtest/gtest.h>

#include "llm/fake_server_testing.h"

namespace kernelpro::llm {
namespace llm_http_test {

using testing::FakeServer;
using testing::ScriptedReply;

TEST(HttpTransportTest, SendsBodyAndHeadersAndReadsTheReply) {
  FakeServer server;
  ScriptedReply reply = ScriptedReply::Json(Json{{"ok", true}});
  reply.headers.insert({"x-request-id", "abc"});
  server.Reply(reply);
  HttpRequest req;
  req.url = server.BaseUrl() + "/v1/chat/completions";
  req.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer k"}};
  req.body = R"({"model": "m"})";
  HttpResult r = MakeCurlTransport()->Send(req);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.response().status, 200);
  EXPECT_EQ(Json::parse(r.response().body), (Json{{"ok", true}}));
  EXPECT_EQ(r.response().Header("X-Request-ID"), "abc");
  auto got = server.Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/v1/chat/completions");
  EXPECT_EQ(got[0].Header("authorization"), "Bearer k");
  EXPECT_EQ(got[0].body, req.body);
}

TEST(HttpTransportTest, AStalledServerTimesOut) {
  FakeServer server;
  ScriptedReply slow = ScriptedReply::Json(Json::object());
  slow.stall = std::chrono::milliseconds(1500);
  server.Reply(slow);
  HttpRequest req;
  req.url = server.BaseUrl() + "/x";
  req.total_timeout = std::chrono::milliseconds(300);
  HttpResult r = MakeCurlTransport()->Send(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kTimeout) << r.error().ToString();
}

TEST(HttpTransportTest, RefusedConnectionIsAConnectionError) {
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(testing::ClosedPort()) + "/x";
  req.total_timeout = std::chrono::milliseconds(5000);
  HttpResult r = MakeCurlTransport()->Send(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kConnection);
  EXPECT_TRUE(r.error().retryable());
}

TEST(HttpTransportTest, StatusesBecomeErrorKindsWithTheProvidersMessage) {
  HttpResponse r;
  r.status = 429;
  r.headers = {{"retry-after", "7"}};
  r.body = R"({"error": {"message": "Rate limit reached", "type": "requests"}})";
  Error e = HttpStatusError(r, "openai");
  EXPECT_EQ(e.kind, ErrorKind::kRateLimited);
  EXPECT_EQ(*e.retry_after_s, 7.0);
  EXPECT_EQ(e.message, "openai: Rate limit reached");
  r.status = 503;
  r.headers.clear();
  r.body = "<html>upstream down</html>";
  EXPECT_EQ(HttpStatusError(r, "x").kind, ErrorKind::kServer);
  r.status = 401;
  EXPECT_EQ(HttpStatusError(r, "x").kind, ErrorKind::kAuth);
  r.status = 400;
  r.body = R"({"message": "max_tokens too large"})";
  Error bad = HttpStatusError(r, "bedrock");
  EXPECT_EQ(bad.kind, ErrorKind::kBadRequest);
  EXPECT_FALSE(bad.retryable());
  EXPECT_EQ(bad.message, "bedrock: max_tokens too large");
}

TEST(HttpTransportTest, RetryAfterAsSecondsOrAnHttpDate) {
  EXPECT_EQ(*ParseRetryAfter(" 12 "), 12.0);
  EXPECT_EQ(*ParseRetryAfter("0.5"), 0.5);
  EXPECT_EQ(*ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);  // in the past: now
  EXPECT_FALSE(ParseRetryAfter("").has_value());
  EXPECT_FALSE(ParseRetryAfter("soon").has_value());
}

TEST(HttpTransportTest, BaseUrlsLoseTheirTrailingSlashes) {
  EXPECT_EQ(WithoutTrailingSlashes("http://127.0.0.1:8080/v1//"), "http://127.0.0.1:8080/v1");
  EXPECT_EQ(WithoutTrailingSlashes("https://api.anthropic.com"), "https://api.anthropic.com");
  EXPECT_EQ(WithoutTrailingSlashes("/"), "");
}

}  // namespace llm_http_test
}  // namespace kernelpro::llm
