// The suite's clock and phases (suite/session.h): elapsed covers the builds before the first task,
// `suite status` says what a running worker is doing, and the time left divides by the worker's
// parallelism, whatever is running at the moment of asking.
#include "suite/session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/json_io.h"
#include "suite/results.h"

namespace kernelpro::suite {
namespace suite_session_test {
namespace fs = std::filesystem;

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kp_session_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    for (const char* id : {"a", "b", "c", "d"}) manifest_.tasks.push_back({id, 0, 0, {}});
  }
  void TearDown() override { fs::remove_all(root_); }
  // A finished task that ran `seconds`, ending `ago` seconds before now.
  void Finished(const std::string& id, double seconds, double ago) {
    const double end = NowSeconds() - ago;
    ASSERT_TRUE(WriteJsonFile(dir_.result(id), {{"status", "correct"},
                                                {"correct", true},
                                                {"started_at", IsoTime(end - seconds)},
                                                {"finished_at", IsoTime(end)},
                                                {"seconds", seconds}})
                    .ok());
  }
  fs::path root_;
  SuiteDir dir_{
      (fs::temp_directory_path() / ("kp_session_dir_" + std::to_string(::getpid()))).string()};
  SuiteManifest manifest_;
};

TEST_F(SessionTest, ElapsedCoversTheBuildsBeforeTheFirstTaskAndStatusNamesThePhase) {
  fs::remove_all(dir_.dir());
  SessionRecorder session(dir_, 0, 2);
  session.Phase("building 11 candidates, 2 at a time");
  // Rewind this session's start by 200 s, as if the builds had taken that long.
  const std::string path = dir_.dir() + "/sessions/0.json";
  auto json = ReadJsonFile(path);
  ASSERT_TRUE(json.ok());
  (*json)["first_started_at"] = NowSeconds() - 200;
  (*json)["started_at"] = NowSeconds() - 200;
  ASSERT_TRUE(WriteJsonFile(path, *json).ok());

  SuiteProgress p = ReadProgress(dir_, manifest_);
  EXPECT_GE(p.elapsed_s, 199) << "no task has started, yet the suite has been working";
  ASSERT_EQ(p.phases.size(), 1u);
  EXPECT_EQ(p.phases[0].first, "building 11 candidates, 2 at a time");

  // Two tasks of 60 s done, two left, two at a time: about 60 s left, whatever runs right now.
  Finished("a", 60, 10);
  Finished("b", 60, 5);
  p = ReadProgress(dir_, manifest_);
  EXPECT_GE(p.elapsed_s, 199);
  ASSERT_TRUE(p.remaining_s);
  EXPECT_NEAR(*p.remaining_s, 60, 1);
  fs::remove_all(dir_.dir());
}

TEST_F(SessionTest, AFinishedSessionHasNoPhaseAndItsStartSurvivesAResume) {
  fs::remove_all(dir_.dir());
  { SessionRecorder session(dir_, 0, 1); }
  // As if that session had begun 1000 s ago.
  auto json = ReadJsonFile(dir_.dir() + "/sessions/0.json");
  ASSERT_TRUE(json.ok());
  const double first = NowSeconds() - 1000;
  (*json)["first_started_at"] = first;
  ASSERT_TRUE(WriteJsonFile(dir_.dir() + "/sessions/0.json", *json).ok());
  auto sessions = ReadSessions(dir_);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_FALSE(sessions[0].live);
  EXPECT_EQ(sessions[0].phase, "finished");
  EXPECT_TRUE(ReadProgress(dir_, manifest_).phases.empty());

  SessionRecorder resumed(dir_, 0, 1);
  sessions = ReadSessions(dir_);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_TRUE(sessions[0].live);
  EXPECT_DOUBLE_EQ(sessions[0].first_started_at, first);
  EXPECT_GE(ReadProgress(dir_, manifest_).elapsed_s, 999);
  fs::remove_all(dir_.dir());
}

}  // namespace suite_session_test
}  // namespace kernelpro::suite
