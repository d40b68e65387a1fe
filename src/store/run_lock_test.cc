#include "store/run_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kernelpro::store {
namespace store_run_lock_test {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("kp-lock-test-" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  return dir;
}

TEST(RunDirectoryLockTest, ASecondHolderIsRefusedWithTheFirstHoldersPidAndCommand) {
  fs::path dir = FreshDir("busy");
  auto first = RunDirectoryLock::Acquire(dir.string(), "optimize");
  ASSERT_TRUE(first.ok()) << first.status().message();
  // flock locks belong to open file descriptions: a second open in this process conflicts as a
  // second process would.
  auto second = RunDirectoryLock::Acquire(dir.string(), "resume");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kUnavailable);
  const std::string& message = second.status().message();
  EXPECT_NE(message.find("kernelpro optimize (PID " + std::to_string(getpid())), std::string::npos)
      << message;
  EXPECT_NE(message.find("kill " + std::to_string(getpid())), std::string::npos) << message;
}

TEST(RunDirectoryLockTest, TheLockIsFreeAgainOnceItsHolderIsGone) {
  fs::path dir = FreshDir("released");
  {
    auto held = RunDirectoryLock::Acquire(dir.string(), "optimize");
    ASSERT_TRUE(held.ok());
  }
  EXPECT_TRUE(RunDirectoryLock::Acquire(dir.string(), "resume").ok());
}

TEST(RunDirectoryLockTest, ALockFileLeftByADeadProcessDoesNotBlock) {
  fs::path dir = FreshDir("stale");
  fs::create_directories(dir);
  // What a process killed with SIGKILL leaves: the file names it, but no one holds the flock.
  std::ofstream(dir / kRunLockFileName)
      << "pid=999999 command=optimize since=2026-01-01T00:00:00Z\n";
  auto lock = RunDirectoryLock::Acquire(dir.string(), "resume");
  ASSERT_TRUE(lock.ok()) << lock.status().message();
  std::ifstream in(dir / kRunLockFileName);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("pid=" + std::to_string(getpid()) + " command=resume"), std::string::npos);
}

TEST(RunDirectoryLockTest, AnUncreatableDirectoryIsAnIoErrorNamingThePath) {
  auto lock = RunDirectoryLock::Acquire("/proc/kernelpro-no/run", "optimize");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), Status::Code::kIoError);
  EXPECT_NE(lock.status().message().find("/proc/kernelpro-no/run"), std::string::npos);
}

}  // namespace store_run_lock_test
}  // namespace kernelpro::store
