// The sandbox, run for real with bubblewrap (scripts/setup installs it): what a candidate's process
// can see, write, reach and leave behind.
#include "eval/sandbox.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/subprocess.h"
#include "eval/worker_client.h"

namespace kernelpro::eval {
namespace eval_sandbox_test {

namespace fs = std::filesystem;

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kp-sandbox-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "home/.ssh");
    fs::create_directories(root_ / "private");
    std::ofstream(root_ / "home/.ssh/id_rsa") << "PRIVATE KEY\n";
    auto sandbox = Sandbox::Create({});
    ASSERT_TRUE(sandbox.ok()) << sandbox.status().message();
    sandbox_ = *sandbox;
  }
  void TearDown() override { fs::remove_all(root_); }

  ProcessResult Run(const std::string& script, const SandboxMounts& mounts) {
    ProcessOptions options;
    options.argv = sandbox_.Wrap({"/bin/sh", "-c", script}, mounts);
    options.inherit_env = false;
    options.env = WorkerEnvironment({}, {});
    options.limits.wall_timeout = std::chrono::seconds(60);
    auto result = RunProcess(options);
    EXPECT_TRUE(result.ok());
    return result.ok() ? *result : ProcessResult{};
  }

  fs::path root_;
  Sandbox sandbox_ = Sandbox::Unconfined();
};

TEST_F(SandboxTest, OnlyTheStepsOwnDirectoryIsWritableAndTheHomeDirectoryIsAbsent) {
  const std::string home = (root_ / "home").string();
  const std::string mine = (root_ / "private").string();
  ProcessResult r = Run("cat " + home + "/.ssh/id_rsa; echo planted > " + home +
                            "/planted; echo planted > /usr/planted; echo ok > " + mine +
                            "/out; echo HOME=$HOME; pwd",
                        {{}, {mine}});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.Describe() << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("PRIVATE KEY"), std::string::npos) << r.stdout_text;
  EXPECT_FALSE(fs::exists(root_ / "home/planted"));
  EXPECT_FALSE(fs::exists("/usr/planted"));
  EXPECT_TRUE(fs::exists(root_ / "private/out"));
  EXPECT_NE(r.stdout_text.find("HOME=" + mine + "\n" + mine + "\n"), std::string::npos)
      << r.stdout_text;
}

TEST_F(SandboxTest, ReadOnlyMountsCanBeReadButNotWritten) {
  std::ofstream(root_ / "private/input") << "input data\n";
  const std::string input = (root_ / "private/input").string();
  ProcessResult r = Run("cat " + input + "; echo changed > " + input, {{input}, {}});
  EXPECT_NE(r.stdout_text.find("input data"), std::string::npos) << r.stderr_text;
  std::ifstream in(input);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "input data");
}

TEST_F(SandboxTest, SecretsUnderEtcAreMasked) {
  if (!fs::exists("/etc/shadow")) GTEST_SKIP() << "no /etc/shadow here";
  // Masked with an empty file, or unreadable without root's capabilities: nothing comes out.
  ProcessResult r = Run("cat /etc/shadow 2>/dev/null | wc -c", {});
  EXPECT_EQ(r.stdout_text, "0\n") << r.stderr_text;
}

TEST_F(SandboxTest, ThereIsNoNetworkNotEvenTheHostsLoopback) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof(address);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  ProcessResult r =
      Run("/usr/bin/python3 -I -c \"import socket; socket.create_connection(("
          "'127.0.0.1', " +
              std::to_string(port) + "), timeout=3); print('connected')\"",
          {});
  close(listener);
  EXPECT_EQ(r.stdout_text.find("connected"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("Connection refused"), std::string::npos) << r.stderr_text;
}

TEST_F(SandboxTest, NoProcessOutlivesTheStepNotEvenANewSession) {
  // A unique argument marks the escapee in /proc.
  const std::string marker = "987.654" + std::to_string(getpid() % 1000);
  ProcessResult r =
      Run("setsid sleep " + marker + " > /dev/null 2>&1 < /dev/null & echo started", {});
  EXPECT_NE(r.stdout_text.find("started"), std::string::npos);
  auto still_running = [&] {
    for (const auto& entry : fs::directory_iterator("/proc")) {
      std::string cmdline;
      try {  // a process that ends meanwhile makes the read throw (ESRCH): it is not the escapee
        std::ifstream in(entry.path() / "cmdline");
        cmdline.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      } catch (const std::exception&) {
        continue;
      }
      if (cmdline.find(marker) != std::string::npos && cmdline.find("sleep") == 0) return true;
    }
    return false;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (still_running() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(still_running());
}

TEST_F(SandboxTest, ASignalDeathIsReportedAsBwrapExitingWith128PlusTheSignal) {
  ProcessResult r = Run("kill -SEGV $$", {});
  ASSERT_TRUE(r.exited) << r.Describe();
  EXPECT_TRUE(sandbox_.ExitCodeIsSignal(r.exit_code)) << r.exit_code;
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
}

TEST(WorkerEnvironmentTest, CredentialsNeverPassEvenWhenAskedFor) {
  setenv("OPENAI_API_KEY", "sk-secret", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "aws-secret", 1);
  setenv("HF_TOKEN", "hf-secret", 1);
  setenv("KERNELPRO_TEST_HARMLESS", "fine", 1);
  auto env = WorkerEnvironment({"OPENAI_API_KEY", "KERNELPRO_TEST_HARMLESS"}, {{"SET", "x"}});
  EXPECT_FALSE(env.contains("OPENAI_API_KEY"));
  EXPECT_FALSE(env.contains("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(env.contains("HF_TOKEN"));
  EXPECT_EQ(env["KERNELPRO_TEST_HARMLESS"], "fine");  // asked for by name (--pass-env)
  EXPECT_EQ(env["SET"], "x");
  EXPECT_TRUE(env.contains("PATH"));
  auto defaults = WorkerEnvironment({}, {});
  EXPECT_FALSE(defaults.contains("KERNELPRO_TEST_HARMLESS"));
  for (const char* name :
       {"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "KERNELPRO_TEST_HARMLESS"}) {
    unsetenv(name);
  }
}

TEST(SandboxCreateTest, AMissingBwrapIsAClearRefusalNamingTheWayOut) {
  SandboxOptions options;
  options.bwrap = "/nonexistent/bwrap";
  auto sandbox = Sandbox::Create(options);
  ASSERT_FALSE(sandbox.ok());
  EXPECT_NE(sandbox.status().message().find("--unsafe-no-sandbox"), std::string::npos)
      << sandbox.status().message();
  SandboxOptions off;
  off.enabled = false;
  auto unconfined = Sandbox::Create(off);
  ASSERT_TRUE(unconfined.ok());
  EXPECT_FALSE(unconfined->active());
  EXPECT_NE(unconfined->Describe().find("--unsafe-no-sandbox"), std::string::npos);
}

}  // namespace eval_sandbox_test
}  // namespace kernelpro::eval

namespace kernelpro::eval {
namespace eval_sandbox_test {

TEST(MountsForRequestTest, AStepSeesItsSourcesAndInputsAndWritesOnlyItsOutputs) {
  const std::string root = KERNELPRO_SOURCE_DIR;
  Json check = {{"candidate", root + "/tests/candidates/good/cpu_tiny_swish.py"},
                {"inputs_dir", "/cache/inputs/abc"},
                {"build_root", "/cache/builds/123"},
                {"out_dir", "/work/check"},
                {"reference_dir", "/cache/references/abc"},
                {"cache_dir", "/cache"}};
  SandboxMounts mounts = MountsForRequest("check", check);
  EXPECT_EQ(mounts.writable, std::vector<std::string>({"/work/check"}));
  auto readable = [&](const std::string& p) {
    return std::find(mounts.read_only.begin(), mounts.read_only.end(), p) != mounts.read_only.end();
  };
  EXPECT_TRUE(readable(root + "/tests/candidates/good/cpu_tiny_swish.py"));
  EXPECT_TRUE(
      readable(root + "/tests/candidates/good/cpu_relu_rand.py"));  // a sibling it may import
  EXPECT_TRUE(readable("/cache/inputs/abc"));
  EXPECT_TRUE(readable("/cache/builds/123"));
  EXPECT_FALSE(readable("/cache/references/abc"));
  EXPECT_FALSE(readable("/cache"));
  EXPECT_FALSE(readable(root + "/tests/candidates/good"));  // files, not the folder

  SandboxMounts build = MountsForRequest("build", check);
  EXPECT_NE(std::find(build.writable.begin(), build.writable.end(), "/cache/builds/123"),
            build.writable.end());
}

TEST(MountsForRequestTest, TheProblemThatRegeneratesLargeInputsIsReadable) {
  const std::string root = KERNELPRO_SOURCE_DIR;
  Json check = {{"candidate", root + "/tests/candidates/good/cpu_tiny_swish.py"},
                {"inputs_recipe",
                 {{"problem", root + "/problems/swish/problem.py"},
                  {"trials", {{"check_0", {{"seed", 1}, {"fingerprint", "0"}}}}}}}};
  SandboxMounts mounts = MountsForRequest("check", check);
  EXPECT_NE(std::find(mounts.read_only.begin(), mounts.read_only.end(),
                      root + "/problems/swish/problem.py"),
            mounts.read_only.end());
  EXPECT_TRUE(mounts.writable.empty());
}

TEST(MountsForRequestTest, PrecompiledHeadersAreNeverWritableByACandidate) {
  Json build = {
      {"candidate", std::string(KERNELPRO_SOURCE_DIR) + "/tests/candidates/good/cpu_tiny_swish.py"},
      {"build_root", "/cache/builds/123"},
      {"pch_dir", "/cache/pch"}};
  for (const std::string step : {"build", "check", "time", "serve"}) {
    SandboxMounts mounts = MountsForRequest(step, build);
    EXPECT_NE(std::find(mounts.read_only.begin(), mounts.read_only.end(), "/cache/pch"),
              mounts.read_only.end())
        << step;
    EXPECT_EQ(std::find(mounts.writable.begin(), mounts.writable.end(), "/cache/pch"),
              mounts.writable.end())
        << step;
  }
}

}  // namespace eval_sandbox_test
}  // namespace kernelpro::eval
