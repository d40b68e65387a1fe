#include "suite/suite_dir.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kernelpro::suite {
namespace suite_suite_dir_test {
namespace fs = std::filesystem;

class SuiteDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kp_suite_dir_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "problems");
    Write("problems/1_A.py", "# A\n");
    Write("problems/2_B.py", "# B\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    std::ofstream(root_ / relative) << text;
  }
  SuiteManifest Manifest() {
    SuiteManifest m;
    m.mode = "eval";
    m.problems_dir = (root_ / "problems").string();
    m.candidates_dir = (root_ / "cands").string();
    auto problems = DiscoverProblems(m.problems_dir);
    EXPECT_TRUE(problems.ok());
    m.problems = *problems;
    for (std::size_t i = 0; i < m.problems.size(); ++i) {
      m.tasks.push_back({m.problems[i].key, i, 0, {}});
    }
    m.options = {{"executor", {{"device", "cpu"}}}};
    return m;
  }
  fs::path root_;
};

TEST_F(SuiteDirTest, ASuiteIsCreatedOnceAndReopenedAsTheSameSuite) {
  SuiteDir dir((root_ / "suite").string());
  auto created = CreateOrOpenSuite(dir, Manifest());
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(created->problem_sha256.size(), 2u);
  EXPECT_FALSE(created->created_at.empty());
  auto again = CreateOrOpenSuite(dir, Manifest());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->created_at, created->created_at);
  auto opened = OpenSuite(dir);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->tasks.size(), 2u);
  EXPECT_EQ(opened->tasks[1].id, "2_B");
}

TEST_F(SuiteDirTest, AnotherSuiteInTheSameDirectoryIsRefusedNamingTheDifference) {
  SuiteDir dir((root_ / "suite").string());
  ASSERT_TRUE(CreateOrOpenSuite(dir, Manifest()).ok());
  SuiteManifest other = Manifest();
  other.options["executor"]["device"] = "cuda";
  auto refused = CreateOrOpenSuite(dir, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("options.executor.device differs"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("kernelpro suite resume"), std::string::npos);
}

TEST_F(SuiteDirTest, AChangedProblemFileIsRefused) {
  SuiteDir dir((root_ / "suite").string());
  ASSERT_TRUE(CreateOrOpenSuite(dir, Manifest()).ok());
  Write("problems/2_B.py", "# B, edited\n");
  auto opened = OpenSuite(dir);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("2_B"), std::string::npos);
  EXPECT_NE(opened.status().message().find("changed since the suite began"), std::string::npos);
}

TEST_F(SuiteDirTest, NoSuiteIsAClearError) {
  auto opened = OpenSuite(SuiteDir((root_ / "none").string()));
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("holds no suite"), std::string::npos);
}

TEST_F(SuiteDirTest, ShardsSplitTasksStaticallyAndCoverEachOnce) {
  SuiteManifest m = Manifest();
  for (int i = 0; i < 5; ++i) m.tasks.push_back({"t" + std::to_string(i), 0, 0, {}});
  std::vector<int> seen(m.tasks.size(), 0);
  for (int s = 0; s < 3; ++s) {
    for (std::size_t i : ShardTasks(m, s, 3)) {
      EXPECT_EQ(static_cast<int>(i % 3), s);
      ++seen[i];
    }
  }
  for (int count : seen) EXPECT_EQ(count, 1);
}

TEST_F(SuiteDirTest, AClaimIsExclusiveAndADeadHoldersClaimIsTakenOver) {
  SuiteDir dir((root_ / "suite").string());
  auto mine = TryClaim(dir, "level1/1_A", 0);
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE(*mine);
  EXPECT_TRUE(*TryClaim(dir, "level1/1_A", 0));  // ours already
  EXPECT_EQ(ReadTaskStatus(dir, "level1/1_A", NowSeconds()).state, TaskState::kRunning);
  ReleaseClaim(dir, "level1/1_A");
  EXPECT_EQ(ReadTaskStatus(dir, "level1/1_A", NowSeconds()).state, TaskState::kPending);

  // A child claims a task and dies without releasing it (kill -9): the claim is stale.
  pid_t child = fork();
  if (child == 0) {
    auto claimed = TryClaim(dir, "2_B", 1);
    _exit(claimed.ok() && *claimed ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto held = ReadClaim(dir, "2_B");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->pid, child);
  EXPECT_EQ(ReadTaskStatus(dir, "2_B", NowSeconds()).state, TaskState::kInterrupted);
  auto taken = TryClaim(dir, "2_B", 0);
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(*taken);
  EXPECT_EQ(ReadClaim(dir, "2_B")->pid, ::getpid());
}

TEST_F(SuiteDirTest, ALiveClaimOnAnotherHostIsLeftAloneUntilItsHeartbeatStops) {
  Claim other{"some-other-host", 1, 0, NowSeconds(), NowSeconds()};
  EXPECT_FALSE(ClaimIsStale(other, NowSeconds()));
  EXPECT_TRUE(ClaimIsStale(other, NowSeconds() + kStaleHeartbeatSeconds + 1));
}

TEST_F(SuiteDirTest, AResultMakesATaskDoneAndAnErrorResultFailed) {
  SuiteDir dir((root_ / "suite").string());
  ASSERT_TRUE(WriteJsonFile(dir.result("a"), {{"status", "incorrect"}}).ok());
  ASSERT_TRUE(WriteJsonFile(dir.result("b"), {{"status", "error"}, {"message", "boom"}}).ok());
  EXPECT_EQ(ReadTaskStatus(dir, "a", NowSeconds()).state, TaskState::kDone);
  EXPECT_EQ(ReadTaskStatus(dir, "b", NowSeconds()).state, TaskState::kFailed);
  EXPECT_EQ(dir.Relative(dir.result("a")), "tasks/a/result.json");
  EXPECT_EQ(dir.Relative("/elsewhere/x.py"), "/elsewhere/x.py");
}

TEST_F(SuiteDirTest, CorruptedFilesAreClearErrorsOrRedoneNeverACrash) {
  SuiteDir dir((root_ / "suite").string());
  fs::create_directories(dir.dir());
  Write("suite/suite.json", "{\"mode\": \"eval\", \"problems\": [");  // cut short
  auto cut = OpenSuite(dir);
  ASSERT_FALSE(cut.ok());
  // The path once, what is wrong, and the way out.
  const std::string message = cut.status().message();
  EXPECT_EQ(message.rfind(dir.manifest() + " is damaged (not valid JSON). Move it aside (mv " +
                              dir.manifest() + " " + dir.manifest() + ".damaged)",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("results already under " + dir.dir() + "/tasks are kept and not redone"),
            std::string::npos)
      << message;
  Write("suite/suite.json", "{\"mode\": \"bake\", \"problems\": [], \"tasks\": []}");
  auto odd = OpenSuite(dir);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("unknown mode 'bake'"), std::string::npos);
  Write("suite/suite.json",
        "{\"mode\": \"eval\", \"problems\": [{\"key\": 3}], \"tasks\": [{\"id\": 1}]}");
  EXPECT_FALSE(OpenSuite(dir).ok());

  // A result cut short by a crash of something else is no result: damaged (reported as such,
  // never as pending or a failure), and the task runs again. So is JSON that is no result.
  fs::create_directories(dir.task_dir("a"));
  Write("suite/tasks/a/result.json", "{\"status\": \"corr");
  EXPECT_EQ(ReadTaskStatus(dir, "a", NowSeconds()).state, TaskState::kDamaged);
  Write("suite/tasks/a/result.json", "[1, 2]");
  EXPECT_EQ(ReadTaskStatus(dir, "a", NowSeconds()).state, TaskState::kDamaged);
  // A garbled claim holds nothing: the task can be claimed.
  Write("suite/tasks/a/claim.json", "garbage");
  auto taken = TryClaim(dir, "a", 0);
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(*taken);
}

}  // namespace suite_suite_dir_test
}  // namespace kernelpro::suite
