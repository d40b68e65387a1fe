// The one request/response form: JSON round trips (cassettes depend on them) and extracting JSON
// from free-text replies.
#include "llm/types.h"

#include <gtest/gtest.h>

namespace kernelpro::llm {
namespace llm_types_test {

Request FullRequest() {
  Request r;
  r.system = "You write CUDA.";
  r.messages.push_back(Message::User("Make it fast."));
  r.messages.push_back(
      Message::Assistant("Let me look.", {{"call_1", "read_file", Json{{"path", "kernel.cu"}}}}));
  r.messages.push_back(Message::Tool({"call_1", "read_file", "__global__ void k() {}", false}));
  r.tools.push_back({"read_file", "Reads a file", Json{{"type", "object"}}});
  r.tool_choice = ToolChoice::kNamed;
  r.tool_choice_name = "read_file";
  r.max_tokens = 1024;
  r.temperature = 0.2;
  r.stop = {"</answer>"};
  r.response_schema = ResponseSchema{"candidates", Json{{"type", "array"}}};
  return r;
}

TEST(LlmTypesTest, RequestRoundTripsThroughJson) {
  Request r = FullRequest();
  auto back = RequestFromJson(ToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToJson(*back), ToJson(r));
  EXPECT_EQ(back->messages[2].tool_result->content, "__global__ void k() {}");
  EXPECT_EQ(*back->temperature, 0.2);
  EXPECT_EQ(back->tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(back->tool_choice_name, "read_file");
  // The default choice is left out, so requests recorded before the field existed still match.
  EXPECT_FALSE(ToJson(Request{}).contains("tool_choice"));
}

// A seed is recorded (cassettes, the run store) and read back; no seed is no key at all, so the
// requests recorded before seeds existed keep their JSON and their fingerprints.
TEST(LlmTypesTest, SeedRoundTripsAndAnAbsentOneLeavesNoTrace) {
  Request r = FullRequest();
  EXPECT_FALSE(ToJson(r).contains("seed"));
  auto unseeded = RequestFromJson(ToJson(r));
  ASSERT_TRUE(unseeded.ok()) << unseeded.status().ToString();
  EXPECT_FALSE(unseeded->seed.has_value());

  r.seed = 18446744073709551615ull;  // the whole uint64 range survives JSON
  EXPECT_EQ(ToJson(r)["seed"], Json(18446744073709551615ull));
  auto seeded = RequestFromJson(Json::parse(DumpJson(ToJson(r))));
  ASSERT_TRUE(seeded.ok()) << seeded.status().ToString();
  EXPECT_EQ(seeded->seed, r.seed);
  EXPECT_EQ(ToJson(*seeded), ToJson(r));

  Json negative = ToJson(r);
  negative["seed"] = -1;
  auto bad = RequestFromJson(negative);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("seed"), std::string::npos) << bad.status().message();
}

TEST(LlmTypesTest, ResponseAndErrorRoundTrip) {
  Response r;
  r.text = "done";
  r.tool_calls = {{"c", "f", Json{{"x", 1}}}};
  r.stop_reason = FinishReason::kToolUse;
  r.provider_stop_reason = "tool_calls";
  r.usage = {12, 34};
  r.latency_ms = 5.5;
  r.structured = Json{{"a", 1}};
  auto back = ResponseFromJson(ToJson(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToJson(*back), ToJson(r));

  Error e{ErrorKind::kRateLimited, "slow down", 429, 7.0, 3};
  auto eb = ErrorFromJson(ToJson(e));
  ASSERT_TRUE(eb.ok());
  EXPECT_EQ(eb->kind, ErrorKind::kRateLimited);
  EXPECT_EQ(*eb->retry_after_s, 7.0);
  EXPECT_EQ(e.ToString(), "rate limited (HTTP 429) after 3 attempts: slow down");
  EXPECT_TRUE(e.retryable());
  EXPECT_FALSE(MakeError(ErrorKind::kBadRequest, "").retryable());
  EXPECT_FALSE(ErrorFromJson(Json{{"kind", "gremlins"}}).ok());
}

// A run stops on a permanent error and goes on after a transient one (search/orchestrator.h).
TEST(LlmTypesTest, PermanentErrorsAreTheOnesOnlyTheUserCanFix) {
  EXPECT_TRUE(MakeError(ErrorKind::kReplayMiss, "cassette spent").permanent());
  EXPECT_TRUE(MakeError(ErrorKind::kAuth, "bad key", 401).permanent());
  EXPECT_TRUE(MakeError(ErrorKind::kAuth, "forbidden", 403).permanent());
  EXPECT_TRUE(MakeError(ErrorKind::kBadRequest, "no such model", 404).permanent());
  EXPECT_TRUE(MakeError(ErrorKind::kConfig, "no model").permanent());
  EXPECT_FALSE(MakeError(ErrorKind::kBadRequest, "prompt too long", 400).permanent());
  EXPECT_FALSE(MakeError(ErrorKind::kRateLimited, "slow down", 429).permanent());
  EXPECT_FALSE(MakeError(ErrorKind::kServer, "oops", 500).permanent());
  EXPECT_FALSE(MakeError(ErrorKind::kTimeout, "").permanent());
  EXPECT_FALSE(MakeError(ErrorKind::kMalformed, "not JSON").permanent());
}

TEST(LlmTypesTest, BadJsonIsAClearError) {
  auto bad = RequestFromJson(Json{{"messages", {{{"role", "wizard"}}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad role"), std::string::npos);
  EXPECT_FALSE(ResponseFromJson(Json{{"stop_reason", "whatever"}}).ok());
  EXPECT_FALSE(ResponseFromJson(Json::array()).ok());
}

TEST(LlmTypesTest, ExtractJsonFindsTheAnswerInProse) {
  EXPECT_EQ(*ExtractJson(R"({"a": 1})"), (Json{{"a", 1}}));
  // A ```json fence wins over an earlier fence that also parses.
  EXPECT_EQ(*ExtractJson("Here:\n```\n[1]\n```\nand\n```json\n{\"b\": 2}\n```\n"),
            (Json{{"b", 2}}));
  EXPECT_EQ(*ExtractJson("```python\nx = {1: 2}\n```\n```\n{\"c\": 3}\n```"), (Json{{"c", 3}}));
  // Braces inside strings do not confuse the balance; a broken first object is skipped.
  EXPECT_EQ(*ExtractJson(R"(Sure! {"broken": } then {"s": "a } b", "n": [1, {"x": 2}]} bye)"),
            (Json{{"s", "a } b"}, {"n", {1, {{"x", 2}}}}}));
  EXPECT_FALSE(ExtractJson("no json here, just {braces").has_value());
  EXPECT_FALSE(ExtractJson("42").has_value());  // a bare scalar is not an answer
}

}  // namespace llm_types_test
}  // namespace kernelpro::llm
