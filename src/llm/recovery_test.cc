// Truncation recovery: a cut-off reply is retried with twice the budget, then with a directive to
// answer concisely, then reported as kTruncated; the tokens of every attempt are counted.
#include "llm/recovery.h"

#include <gtest/gtest.h>

#include "llm/scripted_backend_testing.h"

namespace kernelpro::llm {
namespace llm_recovery_test {

using testing::ScriptedBackend;
using testing::TextResponse;

Response CutOff(Usage usage) {
  return TextResponse("__global__ void k(", usage, FinishReason::kLength);
}

Request Ask(int max_tokens) {
  Request r;
  r.messages.push_back(Message::User("Write the kernel."));
  r.max_tokens = max_tokens;
  return r;
}

struct Harness {
  ScriptedBackend* scripted = nullptr;
  std::unique_ptr<Backend> backend;

  explicit Harness(RecoveryOptions options = {}) {
    auto inner = std::make_unique<ScriptedBackend>();
    scripted = inner.get();
    backend = MakeTruncationRecoveringBackend(std::move(inner), std::move(options));
  }
};

TEST(TruncationRecoveryTest, AnAnswerThatFitsIsReturnedUntouched) {
  Harness h;
  Response done = TextResponse("done", {10, 20});
  done.attempts = 2;  // the reliable client below retried once
  h.scripted->Push(done);
  Outcome out = h.backend->Complete(Ask(1000));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(ToJson(out.response()), ToJson(done));
  EXPECT_EQ(h.scripted->calls(), 1);
}

TEST(TruncationRecoveryTest, DoubledBudgetThatSucceedsEndsRecovery) {
  Harness h;
  h.scripted->Push(CutOff({100, 1000}));
  h.scripted->Push(TextResponse("__global__ void k() {}", {100, 1500}));
  Outcome out = h.backend->Complete(Ask(1000));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().text, "__global__ void k() {}");
  EXPECT_EQ(out.response().usage.input_tokens, 200);
  EXPECT_EQ(out.response().usage.output_tokens, 2500);
  EXPECT_EQ(out.response().attempts, 2);
  auto requests = h.scripted->Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].max_tokens, 2000);
  EXPECT_EQ(ToJson(requests[1])["messages"], ToJson(requests[0])["messages"]);  // same conversation
}

TEST(TruncationRecoveryTest, ThenAConciseRestartThenTruncatedWithTheBudgetsTried) {
  Harness h;
  h.scripted->Push(CutOff({100, 1000}));
  h.scripted->Push(CutOff({100, 2000}));
  h.scripted->Push(CutOff({130, 2000}));
  Outcome out = h.backend->Complete(Ask(1000));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kTruncated);
  EXPECT_EQ(out.error().attempts, 3);
  EXPECT_EQ(out.error().message,
            "still cut off at the token limit after 3 tries with max_tokens 1000, 2000, 2000 "
            "(the last with a directive to answer concisely)");
  auto requests = h.scripted->Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[2].max_tokens, 2000);
  // The directive joins the user's last message rather than adding a second user turn.
  ASSERT_EQ(requests[2].messages.size(), 1u);
  EXPECT_EQ(requests[2].messages[0].text, std::string("Write the kernel.\n\n") + kConciseDirective);
}

TEST(TruncationRecoveryTest, ConciseRestartThatSucceedsCarriesAllTokens) {
  Harness h;
  h.scripted->Push(CutOff({100, 1000}));
  h.scripted->Push(CutOff({100, 2000}));
  h.scripted->Push(TextResponse("short answer", {150, 300}));
  Outcome out = h.backend->Complete(Ask(1000));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().text, "short answer");
  EXPECT_EQ(out.response().usage.input_tokens, 350);
  EXPECT_EQ(out.response().usage.output_tokens, 3300);
  EXPECT_EQ(out.response().attempts, 3);
}

TEST(TruncationRecoveryTest, TheDoubledBudgetIsCapped) {
  RecoveryOptions options;
  options.max_tokens_cap = 3000;
  Harness h(options);
  h.scripted->Push(CutOff({}));
  h.scripted->Push(CutOff({}));
  h.scripted->Push(CutOff({}));
  Outcome out = h.backend->Complete(Ask(2000));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("max_tokens 2000, 3000, 3000"), std::string::npos)
      << out.error().message;
}

TEST(TruncationRecoveryTest, AtTheCapAlreadyGoesStraightToTheDirective) {
  RecoveryOptions options;
  options.max_tokens_cap = 4096;
  options.concise_directive = "Be brief.";
  Harness h(options);
  h.scripted->Push(CutOff({}));
  h.scripted->Push(TextResponse("brief"));
  Request r = Ask(4096);
  r.messages.push_back(Message::Assistant("", {{"c1", "ncu", Json::object()}}));
  r.messages.push_back(Message::Tool({"c1", "ncu", "dram 90%", false}));
  Outcome out = h.backend->Complete(r);
  ASSERT_TRUE(out.ok());
  auto requests = h.scripted->Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].max_tokens, 4096);
  // After tool results the directive is a user turn of its own.
  ASSERT_EQ(requests[1].messages.size(), 4u);
  EXPECT_EQ(requests[1].messages[3].role, Role::kUser);
  EXPECT_EQ(requests[1].messages[3].text, "Be brief.");
}

TEST(TruncationRecoveryTest, AnErrorDuringRecoveryIsReturnedWithTheAttemptsSoFar) {
  Harness h;
  h.scripted->Push(CutOff({100, 1000}));
  Error e = MakeError(ErrorKind::kServer, "overloaded", 529);
  e.attempts = 5;
  h.scripted->Push(e);
  Outcome out = h.backend->Complete(Ask(1000));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kServer);
  EXPECT_EQ(out.error().attempts, 6);
  EXPECT_EQ(h.scripted->calls(), 2);
}

}  // namespace llm_recovery_test
}  // namespace kernelpro::llm
