// WorkerSession against a fake worker package (tests/fixtures/fake_worker) whose `serve` answers
// as its role says: every way a long-lived worker can answer, or fail to, reaches the caller as
// a reply or as a described end, never as a hang or a crash of kernelpro.
#include "eval/worker_session.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace kernelpro::eval {
namespace eval_worker_session_test {

using std::chrono::milliseconds;
using std::chrono::seconds;

WorkerClient FakeClient() {
  WorkerOptions options;
  options.worker_path = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/fake_worker";
  options.scratch_dir = std::string(KERNELPRO_BINARY_DIR) + "/session-test-scratch";
  auto client = WorkerClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status().message();
  return *client;
}

std::unique_ptr<WorkerSession> StartFake(const WorkerClient& client, const std::string& role) {
  auto session =
      WorkerSession::Start(client, role, Json::object(), ProcessLimits{}, {}, Confinement::kNone);
  EXPECT_TRUE(session.ok()) << session.status().message();
  return session.ok() ? std::move(*session) : nullptr;
}

TEST(WorkerSessionTest, ServesManyRequestsInOrderAndClosesCleanly) {
  WorkerClient client = FakeClient();
  auto session = StartFake(client, "echo");
  ASSERT_TRUE(session);
  for (int i = 0; i < 5; ++i) {
    SessionReply reply = session->Call("time", Json{{"round", i}}, seconds(30));
    ASSERT_TRUE(reply.result) << reply.error;
    EXPECT_EQ((*reply.result)["command"], "time");
    EXPECT_EQ((*reply.result)["echo"]["round"], i);
    EXPECT_NEAR((*reply.result)["timeout_s"].get<double>(), 30.0, 1e-9);
  }
  session->Close();
  EXPECT_FALSE(session->alive());
  // After the end, a call answers with how it ended instead of waiting.
  SessionReply after = session->Call("time", Json::object(), seconds(1));
  ASSERT_TRUE(after.ended);
  EXPECT_TRUE(after.ended->exited) << after.ended->Describe();
  EXPECT_EQ(after.ended->exit_code, 0);
}

TEST(WorkerSessionTest, APathViewRewritesThePathsARequestNamesAndNothingElse) {
  WorkerClient client = FakeClient();
  auto session = StartFake(client, "candidate");
  ASSERT_NE(session, nullptr);
  session->set_path_view({{"/cache/builds/abc", "/slot/blank-0/build"},
                          {"/state/problems/9f/problem.py", "/slot/blank-0/src/problem.py"}});
  const Json request{{"build_root", "/cache/builds/abc"},
                     {"so", "/cache/builds/abc/k1/ext.so"},
                     {"sibling", "/cache/builds/abcd"},  // another scope: not below the first
                     {"problem", "/state/problems/9f/problem.py"},
                     {"recipe", {{"problem", "/state/problems/9f/problem.py"}}},
                     {"seeds", {1, 2}},
                     {"out_dir", "/work/candidates/x"}};
  const Json seen = session->InProcessView(request);
  EXPECT_EQ(seen["build_root"], "/slot/blank-0/build");
  EXPECT_EQ(seen["so"], "/slot/blank-0/build/k1/ext.so");
  EXPECT_EQ(seen["sibling"], "/cache/builds/abcd");
  EXPECT_EQ(seen["problem"], "/slot/blank-0/src/problem.py");
  EXPECT_EQ(seen["recipe"]["problem"], "/slot/blank-0/src/problem.py");
  EXPECT_EQ(seen["seeds"], Json({1, 2}));
  EXPECT_EQ(seen["out_dir"], "/work/candidates/x");
  session->Close();
}

TEST(WorkerSessionTest, PrintingOnStdoutCannotForgeAReply) {
  WorkerClient client = FakeClient();
  auto session = StartFake(client, "chatty");
  ASSERT_TRUE(session);
  SessionReply reply = session->Call("check", Json{{"x", 1}}, seconds(30));
  ASSERT_TRUE(reply.result) << reply.error;
  EXPECT_FALSE(reply.result->contains("forged"));
  EXPECT_EQ((*reply.result)["echo"]["x"], 1);
}

TEST(WorkerSessionTest, AWorkerThatDiesIsDescribedBySignal) {
  WorkerClient client = FakeClient();
  auto session = StartFake(client, "die");
  ASSERT_TRUE(session);
  SessionReply reply = session->Call("check", Json::object(), seconds(30));
  ASSERT_FALSE(reply.result);
  ASSERT_TRUE(reply.ended);
  EXPECT_NE(reply.ended->Describe().find("SIGSEGV"), std::string::npos) << reply.ended->Describe();
  EXPECT_FALSE(session->alive());
}

TEST(WorkerSessionTest, AWorkerPastItsTimeLimitIsKilled) {
  WorkerClient client = FakeClient();
  auto session = StartFake(client, "hang");
  ASSERT_TRUE(session);
  auto start = std::chrono::steady_clock::now();
  SessionReply reply = session->Call("time", Json::object(), milliseconds(1500));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(20));
  ASSERT_TRUE(reply.ended);
  EXPECT_TRUE(reply.ended->cancelled);
  EXPECT_NE(reply.error.find("timed out"), std::string::npos) << reply.error;
}

TEST(WorkerSessionTest, AReplyThatIsNotTheHarnessEndsTheWorker) {
  WorkerClient client = FakeClient();
  for (const char* role : {"garbage", "wrong_id"}) {
    auto session = StartFake(client, role);
    ASSERT_TRUE(session);
    SessionReply reply = session->Call("check", Json::object(), seconds(30));
    ASSERT_FALSE(reply.result) << role;
    ASSERT_TRUE(reply.ended) << role;
    EXPECT_NE(reply.error.find("is not the harness's"), std::string::npos) << reply.error;
    EXPECT_FALSE(session->alive());
  }
}

TEST(WorkerSessionTest, DestroyingASessionEndsItsWorker) {
  WorkerClient client = FakeClient();
  auto session = StartFake(client, "echo");
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->Call("check", Json::object(), seconds(30)).result);
  session.reset();  // returns only once the worker is gone and reaped
  SUCCEED();
}

}  // namespace eval_worker_session_test
}  // namespace kernelpro::eval
