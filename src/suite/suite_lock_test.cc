// One writer per suite: two at once are refused with the holder named, shards run beside each
// other, and a lock left by a killed run is taken over.
#include "suite/suite_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

namespace kernelpro::suite {
namespace suite_suite_lock_test {

namespace fs = std::filesystem;

class SuiteLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kp_suite_lock_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(SuiteLockTest, ASecondWriterIsRefusedWithTheHolderAndHowToFollowIt) {
  const SuiteDir dir((root_ / "s").string());
  auto first = SuiteLock::Acquire(dir, 0, 1, "suite eval");
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = SuiteLock::Acquire(dir, 0, 1, "suite resume");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kUnavailable);
  const std::string message = second.status().message();
  EXPECT_NE(message.find(dir.dir() + " is being run by kernelpro suite eval (PID " +
                         std::to_string(::getpid()) + ", since "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Follow it with `kernelpro suite status " + dir.dir() + "`"),
            std::string::npos)
      << message;
  // A shard cannot run beside a whole-suite run either.
  EXPECT_FALSE(SuiteLock::Acquire(dir, 1, 4, "suite run").ok());
}

TEST_F(SuiteLockTest, ShardsRunBesideEachOtherButNotTwiceNorBesideTheWholeSuite) {
  const SuiteDir dir((root_ / "s").string());
  auto zero = SuiteLock::Acquire(dir, 0, 2, "suite run");
  auto one = SuiteLock::Acquire(dir, 1, 2, "suite run");
  ASSERT_TRUE(zero.ok()) << zero.status().message();
  ASSERT_TRUE(one.ok()) << one.status().message();
  auto again = SuiteLock::Acquire(dir, 1, 2, "suite run");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("(shard 1 of 2)"), std::string::npos)
      << again.status().message();
  EXPECT_FALSE(SuiteLock::Acquire(dir, 0, 1, "suite eval").ok());
}

TEST_F(SuiteLockTest, ALockLeftByAKilledRunIsTakenOver) {
  const SuiteDir dir((root_ / "s").string());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = SuiteLock::Acquire(dir, 0, 1, "suite eval");
    if (!held.ok()) _exit(3);
    raise(SIGKILL);  // kill -9 while holding it
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child could not take the lock";
  auto taken = SuiteLock::Acquire(dir, 0, 1, "suite resume");
  EXPECT_TRUE(taken.ok()) << taken.status().message();
}

}  // namespace suite_suite_lock_test
}  // namespace kernelpro::suite
