#include "core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace kernelpro {
namespace core_subprocess_test {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProcessOptions Shell(const std::string& script) {
  ProcessOptions options;
  options.argv = {"/bin/sh", "-c", script};
  // A safety net: a broken implementation should fail the test, not hang the suite.
  options.limits.wall_timeout = seconds(60);
  return options;
}

ProcessResult RunOrFail(const ProcessOptions& options) {
  Result<ProcessResult> result = RunProcess(options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : ProcessResult{};
}

// A fresh directory under TMPDIR, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path() / "kernelpro_subprocess_XXXXXX";
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    if (!path_.empty()) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Gone, or a zombie waiting for init to reap it: either way it no longer runs.
bool ProcessIsGone(pid_t pid) {
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(stat_file, stat)) return true;
  const std::size_t state = stat.rfind(')') + 2;
  return state < stat.size() && (stat[state] == 'Z' || stat[state] == 'X');
}

// The kill is immediate, but the orphan's new parent may take a moment to reap it.
bool EventuallyGone(pid_t pid) {
  const auto give_up = std::chrono::steady_clock::now() + seconds(5);
  while (!ProcessIsGone(pid) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  return ProcessIsGone(pid);
}

TEST(RunProcessTest, ReportsExitCode) {
  const ProcessResult ok = RunOrFail(Shell("exit 0"));
  EXPECT_TRUE(ok.started);
  EXPECT_TRUE(ok.exited);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.Describe(), "exit 0");

  const ProcessResult failed = RunOrFail(Shell("exit 3"));
  EXPECT_TRUE(failed.exited);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.term_signal, 0);
  EXPECT_EQ(failed.Describe(), "exit 3");
}

TEST(RunProcessTest, CapturesStdoutAndStderrSeparately) {
  const ProcessResult r = RunOrFail(Shell("echo out; echo err >&2; printf more"));
  EXPECT_EQ(r.stdout_text, "out\nmore");
  EXPECT_EQ(r.stderr_text, "err\n");
  EXPECT_EQ(r.stdout_bytes, 8u);
  EXPECT_EQ(r.stderr_bytes, 4u);
}

TEST(RunProcessTest, DeliversStdinWhileReadingOutput) {
  // 4 MiB through `cat` overflows every pipe buffer: stdin must be written while stdout is read.
  ProcessOptions options = Shell("cat");
  options.stdin_data = std::string(4 << 20, 'x');
  options.stdin_data += "end";
  options.capture_bytes = options.stdin_data.size();
  const ProcessResult r = RunOrFail(options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_bytes, options.stdin_data.size());
  EXPECT_TRUE(r.stdout_text == options.stdin_data);
}

TEST(RunProcessTest, ChildThatIgnoresStdinDoesNotHurtTheParent) {
  // Writing to a closed pipe raises SIGPIPE, which would kill the test binary if not handled.
  ProcessOptions options = Shell("exec 0<&-; sleep 0.2; echo done");
  options.stdin_data = std::string(4 << 20, 'x');
  const ProcessResult r = RunOrFail(options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_text, "done\n");
}

TEST(RunProcessTest, AddsAndRemovesEnvironmentVariables) {
  ASSERT_EQ(setenv("KERNELPRO_TEST_INHERITED", "parent", 1), 0);
  ASSERT_EQ(setenv("KERNELPRO_TEST_REMOVED", "parent", 1), 0);
  ProcessOptions options = Shell(
      "printf '%s|%s|%s' \"$KERNELPRO_TEST_ADDED\" \"$KERNELPRO_TEST_INHERITED\" "
      "\"${KERNELPRO_TEST_REMOVED-unset}\"");
  options.env = {{"KERNELPRO_TEST_ADDED", "a b=c"}};
  options.unset_env = {"KERNELPRO_TEST_REMOVED"};
  EXPECT_EQ(RunOrFail(options).stdout_text, "a b=c|parent|unset");

  options.env = {{"KERNELPRO_TEST_INHERITED", "override"}};
  EXPECT_EQ(RunOrFail(options).stdout_text, "|override|unset");
  unsetenv("KERNELPRO_TEST_INHERITED");
  unsetenv("KERNELPRO_TEST_REMOVED");
}

TEST(RunProcessTest, LooksUpProgramOnTheChildsPath) {
  ProcessOptions options;
  options.argv = {"echo", "hello"};
  EXPECT_EQ(RunOrFail(options).stdout_text, "hello\n");

  options.env = {{"PATH", "/nonexistent"}};
  const ProcessResult r = RunOrFail(options);
  EXPECT_FALSE(r.started);
}

TEST(RunProcessTest, RunsInWorkingDirectory) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  ProcessOptions options = Shell("pwd -P");
  options.working_dir = dir.path();
  EXPECT_EQ(RunOrFail(options).stdout_text, std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST(RunProcessTest, ReportsDeathBySignal) {
  const ProcessResult r = RunOrFail(Shell("kill -SEGV $$"));
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.Describe(), "killed by SIGSEGV (segmentation fault)");
}

TEST(RunProcessTest, TimeoutKillsTheWholeProcessGroup) {
  ProcessOptions options = Shell("sleep 30 & echo $!; sleep 30");
  options.limits.wall_timeout = milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = RunOrFail(options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_TRUE(r.Describe().starts_with("timed out after ")) << r.Describe();

  const pid_t grandchild = std::stoi(r.stdout_text);
  EXPECT_TRUE(EventuallyGone(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(RunProcessTest, ACancelDescriptorEndsTheChildFromAnotherThread) {
  ProcessOptions options = Shell("sleep 30");
  const int cancel = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(cancel, 0);
  options.cancel_fd = cancel;
  std::thread canceller([cancel] {
    std::this_thread::sleep_for(milliseconds(200));
    const std::uint64_t one = 1;
    EXPECT_EQ(write(cancel, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
  });
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = RunOrFail(options);
  canceller.join();
  close(cancel);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_TRUE(r.Describe().starts_with("stopped by kernelpro after ")) << r.Describe();
}

TEST(RunProcessTest, GrandchildrenDieWithTheChild) {
  // The shell exits at once; its background child keeps stdout open and must be killed with it.
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = RunOrFail(Shell("sleep 30 & echo $!"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  const pid_t grandchild = std::stoi(r.stdout_text);
  EXPECT_TRUE(EventuallyGone(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(RunProcessTest, KeepsHeadAndTailOfHugeOutput) {
  ProcessOptions options = Shell("printf HEAD; head -c 50000000 /dev/zero; printf TAIL");
  options.capture_bytes = 1024;
  const ProcessResult r = RunOrFail(options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_bytes, 50000008u);
  EXPECT_LE(r.stdout_text.size(), 1024u + 64u);
  EXPECT_TRUE(r.stdout_text.starts_with("HEAD"));
  EXPECT_TRUE(r.stdout_text.ends_with("TAIL"));
  EXPECT_NE(r.stdout_text.find("[... 49998984 bytes dropped ...]"), std::string::npos);
}

TEST(RunProcessTest, OutputThatFitsIsKeptWhole) {
  ProcessOptions options = Shell("head -c 1024 /dev/zero | tr '\\0' y");
  options.capture_bytes = 1024;
  const ProcessResult r = RunOrFail(options);
  EXPECT_EQ(r.stdout_text, std::string(1024, 'y'));
}

TEST(RunProcessTest, KillsAChildThatPrintsTooMuch) {
  ProcessOptions options;
  options.argv = {"yes"};
  options.limits.wall_timeout = seconds(60);
  options.kill_after_output_bytes = 1 << 20;
  const ProcessResult r = RunOrFail(options);
  EXPECT_TRUE(r.output_limit_hit);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_GT(r.stdout_bytes, 1u << 20);
  EXPECT_TRUE(r.Describe().starts_with("killed: printed more than ")) << r.Describe();
}

TEST(RunProcessTest, CpuLimitKillsBusyLoop) {
  ProcessOptions options = Shell("while :; do :; done");
  options.limits.cpu_seconds = 1;
  const ProcessResult r = RunOrFail(options);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.term_signal == SIGXCPU || r.term_signal == SIGKILL) << r.Describe();
}

TEST(RunProcessTest, FileSizeLimitStopsLargeWrites) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.path() + "/out";
  ProcessOptions options = Shell("dd if=/dev/zero of='" + file + "' bs=1024 count=1024");
  options.limits.max_file_bytes = 64 * 1024;
  const ProcessResult r = RunOrFail(options);
  // SIGXFSZ kills dd unless it was ignored, in which case the write fails with EFBIG.
  EXPECT_TRUE(r.term_signal == SIGXFSZ || (r.exited && r.exit_code != 0)) << r.Describe();
  EXPECT_LE(std::filesystem::file_size(file), 64u * 1024u);
}

TEST(RunProcessTest, MissingProgramIsReportedNotFatal) {
  ProcessOptions options;
  options.argv = {"kernelpro-no-such-program", "arg"};
  const ProcessResult r = RunOrFail(options);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("kernelpro-no-such-program"), std::string::npos) << r.start_error;
  EXPECT_TRUE(r.Describe().starts_with("failed to start: ")) << r.Describe();

  options.argv = {"/nonexistent/kernelpro-tool"};
  const ProcessResult by_path = RunOrFail(options);
  EXPECT_FALSE(by_path.started);
  EXPECT_NE(by_path.start_error.find("No such file"), std::string::npos) << by_path.start_error;
}

TEST(RunProcessTest, MissingWorkingDirectoryIsReportedNotFatal) {
  ProcessOptions options = Shell("true");
  options.working_dir = "/nonexistent/kernelpro-dir";
  const ProcessResult r = RunOrFail(options);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("/nonexistent/kernelpro-dir"), std::string::npos) << r.start_error;
}

TEST(RunProcessTest, EmptyArgvIsAnInvalidArgument) {
  const Result<ProcessResult> r = RunProcess(ProcessOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

TEST(RunProcessTest, ConcurrentCallsFromSeveralThreads) {
  constexpr int kThreads = 4;
  ProcessResult results[kThreads];
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([i, &results] {
      ProcessOptions options = Shell("read line; sleep 0.2; echo \"$line\"; echo err$line >&2");
      options.stdin_data = std::to_string(i) + "\n";
      results[i] = RunProcess(options).value();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(results[i].exit_code, 0);
    EXPECT_EQ(results[i].stdout_text, std::to_string(i) + "\n");
    EXPECT_EQ(results[i].stderr_text, "err" + std::to_string(i) + "\n");
  }
}

TEST(RunProcessTest, WithoutInheritedEnvironmentTheChildSeesOnlyWhatIsGiven) {
  setenv("KERNELPRO_TEST_INHERITED", "yes", 1);
  ProcessOptions options = Shell("echo \"[${KERNELPRO_TEST_INHERITED:-unset}] [$GIVEN]\"");
  options.inherit_env = false;
  options.env = {{"GIVEN", "given"}, {"PATH", "/usr/bin:/bin"}};
  ProcessResult result = RunOrFail(options);
  unsetenv("KERNELPRO_TEST_INHERITED");
  EXPECT_EQ(result.stdout_text, "[unset] [given]\n");
}

TEST(RunProcessTest, KillAllChildrenStopsEveryRunningChildFromAnotherThread) {
  ProcessResult slow;
  std::thread runner([&slow] { slow = RunOrFail(Shell("sleep 30")); });
  // Wait until the child is registered (its group exists), then kill everything.
  const auto give_up = std::chrono::steady_clock::now() + seconds(10);
  int killed = 0;
  while (killed == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(20));
    killed = KillAllChildren();
  }
  runner.join();
  EXPECT_EQ(killed, 1);
  EXPECT_EQ(slow.term_signal, SIGKILL) << slow.Describe();
  EXPECT_LT(slow.wall_time, seconds(10));
}

TEST(RunProcessTest, AChildThatEndsItselfBySigtermIsReturnedWhenKernelproIsNotStopping) {
  // A candidate's own SIGTERM (or one from outside that never reaches kernelpro) is its ending,
  // reported after the grace in which kernelpro would have been told to stop as well.
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = RunOrFail(Shell("kill -TERM $$"));
  EXPECT_EQ(r.term_signal, SIGTERM) << r.Describe();
  EXPECT_GE(std::chrono::steady_clock::now() - start, kStopGrace);
}

TEST(RunProcessTest, AChildStoppedTogetherWithKernelproIsNeverReturnedToBeRecorded) {
  // scancel signals the worker and kernelpro at once; whichever sees it first, the worker's death
  // must not come back as a result (the suite would record a cancelled task as failed).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::thread([] {
          std::this_thread::sleep_for(milliseconds(300));  // kernelpro gets the signal later
          BeginStopping();
          std::this_thread::sleep_for(seconds(3));
          _exit(7);  // what the termination handler does: the process ends, nothing recorded
        }).detach();
        (void)RunProcess(Shell("kill -TERM $$"));
        _exit(1);  // returned: the stopped worker's ending would be recorded
      },
      ::testing::ExitedWithCode(7), "");
  // The same when the worker ends by a wrapper's exit code (bwrap reports 128 + the signal).
  EXPECT_EXIT(
      {
        BeginStopping();
        std::thread([] {
          std::this_thread::sleep_for(seconds(1));
          _exit(7);
        }).detach();
        (void)RunProcess(Shell("exit 137"));
        _exit(1);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(RunProcessTest, AChildDiesWhenTheThreadThatStartedItDies) {
  // PR_SET_PDEATHSIG: what makes workers die with a kernelpro killed by SIGKILL. Here the
  // "parent" is an intermediate process that starts a child through RunProcess and is then
  // killed; the child must not run on as an orphan.
  TempDir dir;
  const std::string pid_file = dir.path() + "/child.pid";
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    ProcessOptions options = Shell("echo $$ > " + pid_file + "; exec sleep 30");
    (void)RunProcess(options);
    _exit(0);
  }
  pid_t child = 0;
  const auto give_up = std::chrono::steady_clock::now() + seconds(10);
  while (child == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(20));
    std::ifstream in(pid_file);
    in >> child;
  }
  ASSERT_GT(child, 0);
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  EXPECT_TRUE(EventuallyGone(child));
}

TEST(DescribeTest, NamesCommonSignals) {
  EXPECT_EQ(SignalDescription(SIGSEGV), "SIGSEGV (segmentation fault)");
  EXPECT_EQ(SignalDescription(SIGABRT), "SIGABRT (abort)");
  EXPECT_EQ(SignalDescription(SIGBUS), "SIGBUS (bus error)");
  EXPECT_EQ(SignalDescription(SIGUSR1), "signal " + std::to_string(SIGUSR1));
}

TEST(DescribeTest, TimeoutAndOutputLimitTakePrecedenceOverTheSignal) {
  ProcessResult r;
  r.started = true;
  r.term_signal = SIGKILL;
  EXPECT_EQ(r.Describe(), "killed by SIGKILL (killed)");
  r.timed_out = true;
  r.wall_time = milliseconds(60012);
  EXPECT_EQ(r.Describe(), "timed out after 60 s (killed)");
  r.wall_time = milliseconds(230);
  EXPECT_EQ(r.Describe(), "timed out after 0.2 s (killed)");
  r.timed_out = false;
  r.output_limit_hit = true;
  r.stdout_bytes = 1000;
  r.stderr_bytes = 24;
  EXPECT_EQ(r.Describe(), "killed: printed more than 1024 bytes");
}

}  // namespace core_subprocess_test
}  // namespace kernelpro
