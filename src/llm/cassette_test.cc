// Cassettes: what is recorded is served back unchanged, matching ignores JSON layout, misses are
// loud and say what differs, and a cassette on disk is always whole lines without credentials.
#include "llm/cassette.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "llm/fake_server_testing.h"
#include "llm/json_http_backend_testing.h"
#include "llm/scripted_backend_testing.h"

namespace kernelpro::llm {
namespace llm_cassette_test {

using testing::ScriptedBackend;
using testing::TextResponse;

std::string FreshPath(const std::string& name) {
  std::string path = ::testing::TempDir() + "/llm_cassette_test_" + name + ".jsonl";
  std::remove(path.c_str());
  return path;
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Request Ask(const std::string& text) {
  Request r;
  r.system = "You write CUDA.";
  r.messages.push_back(Message::User(text));
  return r;
}

std::unique_ptr<Backend> Recorder(ScriptedBackend** scripted, const std::string& path) {
  auto backend = std::make_unique<ScriptedBackend>("gpt-test", "openai");
  *scripted = backend.get();
  auto recorder = MakeRecordingBackend(std::move(backend), path);
  EXPECT_TRUE(recorder.ok()) << recorder.status().ToString();
  return std::move(*recorder);
}

std::unique_ptr<Backend> Replayer(const std::string& path,
                                  ReplayMode mode = ReplayMode::kFingerprint) {
  auto replay = MakeReplayBackend(path, mode);
  EXPECT_TRUE(replay.ok()) << replay.status().ToString();
  return replay.ok() ? std::move(*replay) : nullptr;
}

TEST(CassetteTest, ReplayServesWhatWasRecordedForEachRequest) {
  std::string path = FreshPath("roundtrip");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  Response tiled = TextResponse("use shared memory tiles", {120, 45});
  tiled.structured = Json{{"speedup", 2.5}};
  tiled.latency_ms = 812;
  Response tools = testing::ToolUseResponse({{"call_1", "ncu", Json{{"kernel", "k1"}}}}, {9, 3});
  scripted->Push(tiled);
  scripted->Push(tools);
  ASSERT_TRUE(recorder->Complete(Ask("optimise matmul")).ok());
  ASSERT_TRUE(recorder->Complete(Ask("profile it")).ok());
  recorder.reset();

  auto replay = Replayer(path);
  ASSERT_NE(replay, nullptr);
  EXPECT_EQ(replay->provider(), "replay");
  EXPECT_EQ(replay->model(), "gpt-test");
  // Asked in the other order: matching is by request, not position.
  Outcome second = replay->Complete(Ask("profile it"));
  Outcome first = replay->Complete(Ask("optimise matmul"));
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(ToJson(first.response()), ToJson(tiled));
  EXPECT_EQ(ToJson(second.response()), ToJson(tools));
}

TEST(CassetteTest, FingerprintIgnoresKeyOrderButNotContent) {
  Request a = Ask("hi");
  a.tools.push_back({"ncu", "profile", Json::parse(R"({"type": "object", "required": ["k"]})")});
  Request b = Ask("hi");
  b.tools.push_back({"ncu", "profile", Json::parse(R"({"required":["k"],"type":"object"})")});
  EXPECT_EQ(Fingerprint(a, "m"), Fingerprint(b, "m"));
  EXPECT_EQ(Fingerprint(a, "m").size(), 64u);  // SHA-256 in hex
  EXPECT_NE(Fingerprint(a, "m"), Fingerprint(a, "other-model"));
  b.messages[0].text = "hi!";
  EXPECT_NE(Fingerprint(a, "m"), Fingerprint(b, "m"));
  b = a;
  b.max_tokens = 100;
  EXPECT_NE(Fingerprint(a, "m"), Fingerprint(b, "m"));
  // The seed is part of what was asked: seeds 7 and 8 are different recordings.
  b = a;
  b.seed = 7;
  Request c = a;
  c.seed = 8;
  EXPECT_NE(Fingerprint(a, "m"), Fingerprint(b, "m"));
  EXPECT_NE(Fingerprint(b, "m"), Fingerprint(c, "m"));
}

// A cassette written by hand (or by another JSON library) with keys in any order and spaces
// everywhere still matches the live request.
TEST(CassetteTest, HandWrittenCassetteWithShuffledKeysMatches) {
  std::string path = FreshPath("handwritten");
  {
    std::ofstream out(path);
    out << R"({ "response" : { "text" : "hand made", "stop_reason" : "end" },)"
        << R"(  "request" : { "max_tokens" : 4096, "messages" : [ { "text" : "hi", )"
        << R"("role" : "user" } ], "system" : "You write CUDA." },  "model" : "m1",)"
        << R"( "fingerprint" : "stale, ignored" })"
        << "\n\n";  // a blank line is fine
  }
  auto replay = Replayer(path);
  ASSERT_NE(replay, nullptr);
  Outcome out = replay->Complete(Ask("hi"));
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out.response().text, "hand made");
}

TEST(CassetteTest, RepeatedRequestsAreServedInRecordedOrderThenMiss) {
  std::string path = FreshPath("repeated");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  scripted->Push(TextResponse("first try"));
  scripted->Push(TextResponse("second try"));
  recorder->Complete(Ask("same"));
  recorder->Complete(Ask("same"));
  recorder.reset();

  auto replay = Replayer(path);
  EXPECT_EQ(replay->Complete(Ask("same")).response().text, "first try");
  EXPECT_EQ(replay->Complete(Ask("same")).response().text, "second try");
  Outcome third = replay->Complete(Ask("same"));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().kind, ErrorKind::kReplayMiss);
  EXPECT_NE(third.error().message.find("recorded 2 time(s) (line 1, 2)"), std::string::npos)
      << third.error().message;
}

TEST(CassetteTest, SequentialModeServesFileOrderWhateverTheRequest) {
  std::string path = FreshPath("sequential");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  scripted->Push(TextResponse("one"));
  scripted->Push(TextResponse("two"));
  recorder->Complete(Ask("a"));
  recorder->Complete(Ask("b"));
  recorder.reset();

  auto replay = Replayer(path, ReplayMode::kSequential);
  EXPECT_EQ(replay->Complete(Ask("something else")).response().text, "one");
  EXPECT_EQ(replay->Complete(Ask("a")).response().text, "two");
  Outcome past_end = replay->Complete(Ask("b"));
  ASSERT_FALSE(past_end.ok());
  EXPECT_EQ(past_end.error().kind, ErrorKind::kReplayMiss);
  // "cassette PATH: exhausted: ...": the run stops with these words (search/orchestrator.h).
  EXPECT_NE(
      past_end.error().message.find("exhausted: all 2 recordings of stream 'text' were served"),
      std::string::npos);
}

TEST(CassetteTest, SequentialReplayOfAResumedRunSkipsWhatWasServedBefore) {
  std::string path = FreshPath("sequential_skip");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  scripted->Push(TextResponse("one"));
  scripted->Push(TextResponse("two"));
  recorder->Complete(Ask("a"));
  recorder->Complete(Ask("b"));
  recorder.reset();

  auto replay = MakeReplayBackend(path, ReplayMode::kSequential, "", {{"text", 1}});
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ((*replay)->Complete(Ask("b")).response().text, "two");
  EXPECT_FALSE((*replay)->Complete(Ask("c")).ok());
}

// A whole search asks from several threads: the programmer (schema "candidates") and the memory
// extractor (schema "notes") may come in either order. Each kind of request takes its own
// recordings in file order, so the replay is the same whichever asks first.
TEST(CassetteTest, SequentialReplayKeepsOneOrderPerStreamWhateverTheInterleaving) {
  std::string path = FreshPath("sequential_streams");
  auto with_schema = [](const std::string& text, const std::string& schema) {
    Request r = Ask(text);
    r.response_schema = ResponseSchema{schema, Json{{"type", "object"}}};
    return r;
  };
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  for (const char* text : {"code 1", "notes 1", "code 2", "plain", "notes 2"}) {
    scripted->Push(TextResponse(text));
  }
  recorder->Complete(with_schema("a", "candidates"));
  recorder->Complete(with_schema("b", "notes"));
  recorder->Complete(with_schema("c", "candidates"));
  recorder->Complete(Ask("d"));
  recorder->Complete(with_schema("e", "notes"));
  recorder.reset();

  EXPECT_EQ(ReplayStream(with_schema("x", "candidates")), "schema:candidates");
  EXPECT_EQ(ReplayStream(Ask("x")), "text");

  auto replay = Replayer(path, ReplayMode::kSequential);
  EXPECT_EQ(replay->Complete(with_schema("?", "notes")).response().text, "notes 1");
  EXPECT_EQ(replay->Complete(with_schema("?", "notes")).response().text, "notes 2");
  EXPECT_EQ(replay->Complete(with_schema("?", "candidates")).response().text, "code 1");
  EXPECT_EQ(replay->Complete(Ask("?")).response().text, "plain");
  EXPECT_EQ(replay->Complete(with_schema("?", "candidates")).response().text, "code 2");
  Outcome past_end = replay->Complete(with_schema("?", "notes"));
  ASSERT_FALSE(past_end.ok());
  EXPECT_NE(past_end.error().message.find("all 2 recordings of stream 'schema:notes'"),
            std::string::npos)
      << past_end.error().message;

  // A resumed run that was served the first candidates reply continues with the second.
  auto resumed = MakeReplayBackend(path, ReplayMode::kSequential, "", {{"schema:candidates", 1}});
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ((*resumed)->Complete(with_schema("?", "candidates")).response().text, "code 2");
  EXPECT_EQ((*resumed)->Complete(with_schema("?", "notes")).response().text, "notes 1");
}

TEST(CassetteTest, AMissFailsLoudlyNamingTheCassetteFingerprintAndFirstDifference) {
  std::string path = FreshPath("miss");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  Request recorded = Ask("Write a matmul kernel.");
  recorded.messages.push_back(Message::Assistant("Here it is."));
  recorded.messages.push_back(Message::User("Now make it use tensor cores."));
  Request unrelated = Ask("Something else entirely, nothing alike at all.");
  scripted->Push(TextResponse("ok"));
  scripted->Push(TextResponse("ok"));
  recorder->Complete(unrelated);
  recorder->Complete(recorded);
  recorder.reset();

  auto replay = Replayer(path);
  Request changed = recorded;
  changed.messages[2].text = "Now make it use shared memory.";
  Outcome out = replay->Complete(changed);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kReplayMiss);
  EXPECT_EQ(out.error().message,
            "cassette " + path + ": no recording for request fingerprint " +
                Fingerprint(changed, "gpt-test") +
                "; nearest recorded request (line 2): message 3 text differs at character 17: "
                "recorded \"...ow make it use tensor cores.\", now \"...ow make it use shared "
                "memory.\"");

  Request longer = recorded;
  longer.max_tokens = 8192;
  Outcome budget = replay->Complete(longer);
  ASSERT_FALSE(budget.ok());
  EXPECT_NE(budget.error().message.find("(line 2): max_tokens differs: recorded 4096, now 8192"),
            std::string::npos)
      << budget.error().message;

  Request extra = recorded;
  extra.messages.push_back(Message::User("And document it."));
  EXPECT_NE(
      replay->Complete(extra).error().message.find("recorded request has 3 messages, this one 4"),
      std::string::npos);
}

// Repeats of a seeded run are recorded side by side: each seed replays its own answer, and a seed
// that was never recorded misses naming the seed.
TEST(CassetteTest, SeededRequestsReplayPerSeedAndAMissNamesTheSeed) {
  std::string path = FreshPath("seeds");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  Request seven = Ask("Write a matmul kernel.");
  seven.seed = 7;
  Request eight = seven;
  eight.seed = 8;
  scripted->Push(TextResponse("answer for seed 7"));
  scripted->Push(TextResponse("answer for seed 8"));
  recorder->Complete(seven);
  recorder->Complete(eight);
  recorder.reset();
  EXPECT_NE(Lines(path)[0].find("\"seed\":7"), std::string::npos) << Lines(path)[0];

  auto replay = Replayer(path);
  Outcome b = replay->Complete(eight);
  Outcome a = replay->Complete(seven);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.response().text, "answer for seed 7");
  EXPECT_EQ(b.response().text, "answer for seed 8");
  Outcome unseeded = replay->Complete(Ask("Write a matmul kernel."));
  ASSERT_FALSE(unseeded.ok());
  EXPECT_NE(unseeded.error().message.find("seed differs: recorded 7, now unset"), std::string::npos)
      << unseeded.error().message;
}

TEST(CassetteTest, MalformedLineIsRejectedAtLoadWithItsLineNumber) {
  std::string path = FreshPath("malformed");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  scripted->Push(TextResponse("fine"));
  recorder->Complete(Ask("ok"));
  recorder.reset();
  {
    std::ofstream out(path, std::ios::app);
    out << "{\"request\": {\"messages\": [], \"max_tokens\": 10}, \"model\": \"m\", \"respo\n";
  }
  auto replay = MakeReplayBackend(path);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().message(), path + ":2: not valid JSON");

  std::string both = FreshPath("no_outcome");
  {
    std::ofstream out(both);
    out << R"({"request": {"messages": []}, "model": "m"})"
        << "\n";
  }
  auto no_outcome = MakeReplayBackend(both);
  ASSERT_FALSE(no_outcome.ok());
  EXPECT_EQ(no_outcome.status().message(),
            both + ":1: needs exactly one of \"response\" and \"error\"");

  auto missing = MakeReplayBackend(FreshPath("does_not_exist"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
}

TEST(CassetteTest, RecordedErrorsReplayAsErrors) {
  std::string path = FreshPath("errors");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  Error limited = testing::ErrorWithRetryAfter(ErrorKind::kRateLimited, 429, 30);
  limited.attempts = 5;
  scripted->Push(limited);
  Outcome live = recorder->Complete(Ask("hi"));
  ASSERT_FALSE(live.ok());
  recorder.reset();

  Outcome replayed = Replayer(path)->Complete(Ask("hi"));
  ASSERT_FALSE(replayed.ok());
  EXPECT_EQ(replayed.error().kind, ErrorKind::kRateLimited);
  EXPECT_EQ(replayed.error().http_status, 429);
  EXPECT_EQ(*replayed.error().retry_after_s, 30);
  EXPECT_EQ(replayed.error().attempts, 5);
  EXPECT_EQ(replayed.error().ToString(), live.error().ToString());
}

// Crash safety: the file holds exactly one complete line per finished call at every moment,
// including when many threads record at once.
TEST(CassetteTest, EveryCallLeavesOnlyWholeLinesOnDisk) {
  std::string path = FreshPath("whole_lines");
  ScriptedBackend* scripted = nullptr;
  auto recorder = Recorder(&scripted, path);
  std::string long_text(100'000, 'x');  // larger than one write on many systems
  for (int i = 1; i <= 3; ++i) {
    scripted->Push(TextResponse(long_text));
    recorder->Complete(Ask("call " + std::to_string(i)));
    std::vector<std::string> lines = Lines(path);
    ASSERT_EQ(lines.size(), static_cast<size_t>(i));
    for (const std::string& line : lines) {
      EXPECT_FALSE(Json::parse(line, nullptr, false).is_discarded());
    }
  }

  constexpr int kThreads = 8, kCalls = 10;
  for (int i = 0; i < kThreads * kCalls; ++i) scripted->Push(TextResponse(long_text));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) recorder->Complete(Ask(std::to_string(t * 100 + c)));
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), static_cast<size_t>(3 + kThreads * kCalls));
  for (const std::string& line : lines) {
    Json j = Json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["response"]["text"], long_text);
  }
}

TEST(CassetteTest, CassettesHoldNoCredentials) {
  testing::FakeServer server;
  server.ReplyJson(ToJson(TextResponse("answer")));
  const std::string key = "sk-test-SECRET-0123456789";
  std::string path = FreshPath("credentials");
  auto recorder =
      MakeRecordingBackend(std::make_unique<testing::JsonHttpBackend>(server.BaseUrl(), key), path);
  ASSERT_TRUE(recorder.ok());
  ASSERT_TRUE((*recorder)->Complete(Ask("hi")).ok());
  // The key really was on the wire...
  ASSERT_EQ(server.Received().size(), 1u);
  EXPECT_EQ(server.Received()[0].Header("Authorization"), "Bearer " + key);
  // ...and none of it reached the cassette.
  std::string cassette = Slurp(path);
  ASSERT_FALSE(cassette.empty());
  EXPECT_EQ(cassette.find("SECRET"), std::string::npos);
  EXPECT_EQ(cassette.find("Bearer"), std::string::npos);
  EXPECT_EQ(cassette.find("uthorization"), std::string::npos);
  EXPECT_EQ(cassette.find("x-api-key"), std::string::npos);
}

TEST(CassetteTest, UnwritableCassetteIsAnErrorWhenOpened) {
  auto recorder =
      MakeRecordingBackend(std::make_unique<ScriptedBackend>(), "/nonexistent-dir/c.jsonl");
  ASSERT_FALSE(recorder.ok());
  EXPECT_NE(recorder.status().message().find("/nonexistent-dir/c.jsonl"), std::string::npos);
}

}  // namespace llm_cassette_test
}  // namespace kernelpro::llm
