// End-to-end tests of what a candidate cannot do to kernelpro (issue: verdict integrity and
// isolation), with `kernelpro eval --device cpu` as a user runs it: candidates written to read
// secrets, write outside their directory, phone home, leave processes behind, poison the reference
// cache or run code in the compare step — from Python and from C++ inside their extension — and
// kernelpro killed while a worker runs. The attack candidates live in
// tests/candidates/adversarial/sandbox/; each test copies them into a fresh directory with the
// exact targets (secret file, listener port, marker) filled in, so the attacker knows where to
// look. Each test asserts the verdict and the evidence a user would check: files, connections,
// processes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/json_io.h"
#include "core/subprocess.h"

namespace kernelpro::eval {
namespace eval_isolation_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kTinySwish = kRoot + "/tests/problems/tiny_swish.py";
const std::string kSecretText = "KERNELPRO-TEST-PRIVATE-KEY";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A loopback listener that records whether anyone connected.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    listen(fd_, 16);
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~Listener() { close(fd_); }
  int port() const { return port_; }
  // Connections accepted so far (the kernel queues them while nobody accepts).
  int Connections() {
    int count = 0;
    while (true) {
      int client = accept(fd_, nullptr, nullptr);
      if (client < 0) break;
      ++count;
      close(client);
    }
    return count;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("kp-isolation-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "home/.ssh");
    fs::create_directories(dir_ / "candidates");
    fs::create_directories(dir_ / "cwd");
    std::ofstream(dir_ / "home/.ssh/id_rsa") << kSecretText << "\n";
    fs::copy_file(kRoot + "/tests/candidates/adversarial/sandbox/_attack.py",
                  dir_ / "candidates/_attack.py");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Copies an attack candidate with its `TARGETS = {}` line filled in.
  std::string Candidate(const std::string& name, const Json& targets) {
    std::string code = ReadFile(kRoot + "/tests/candidates/adversarial/sandbox/" + name);
    const std::string line = "TARGETS = {}";
    const std::size_t at = code.find(line);
    EXPECT_NE(at, std::string::npos) << name;
    code.replace(at, line.size(), "TARGETS = " + targets.dump());
    const fs::path path = dir_ / "candidates" / name;
    std::ofstream(path) << code;
    return path.string();
  }

  ProcessOptions EvalCommand(const std::vector<std::string>& candidates,
                             const std::string& cache_dir = "") {
    ProcessOptions p;
    p.argv = {KERNELPRO_BINARY,
              "eval",
              "--device",
              "cpu",
              "--trials",
              "2",
              "--extra-trials",
              "1",
              "--timing-trials",
              "4",
              "--time-budget",
              "1",
              "--timeout",
              "120",
              "--json",
              "--cache-dir",
              cache_dir.empty() ? std::string(KERNELPRO_BINARY_DIR) + "/test-cache" : cache_dir,
              "--problem",
              kTinySwish};
    for (const std::string& c : candidates) p.argv.insert(p.argv.end(), {"--candidate", c});
    // What a user's shell holds: a home with an SSH key, an API key in the environment.
    p.env = {{"HOME", (dir_ / "home").string()},
             {"OPENAI_API_KEY", "sk-" + kSecretText},
             {"KERNELPRO_TEST_SECRET_TOKEN", kSecretText}};
    p.working_dir = (dir_ / "cwd").string();
    p.limits.wall_timeout = std::chrono::minutes(15);
    p.capture_bytes = 1 << 20;
    return p;
  }

  std::vector<Json> Eval(const std::vector<std::string>& candidates,
                         const std::string& cache_dir = "") {
    auto r = RunProcess(EvalCommand(candidates, cache_dir));
    std::vector<Json> results;
    if (!r.ok()) return results;
    last_stderr_ = r->stderr_text;
    std::istringstream lines(r->stdout_text);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) results.push_back(Json::parse(line, nullptr, false));
    }
    EXPECT_EQ(results.size(), candidates.size()) << r->stdout_text << r->stderr_text;
    return results;
  }

  fs::path dir_;
  std::string last_stderr_;
};

std::string StatusOf(const Json& r) { return JsonGet<std::string>(r, "status", "<none>"); }

TEST_F(IsolationTest, ACandidateFindsNoSecretsInTheHomeDirectoryTheEnvironmentOrOtherProcesses) {
  const std::string c = Candidate(
      "read_secrets.py",
      {{"secret_files", {(dir_ / "home/.ssh/id_rsa").string()}}, {"secret_text", kSecretText}});
  auto results = Eval({c});
  ASSERT_EQ(results.size(), 1u) << last_stderr_;
  EXPECT_EQ(StatusOf(results[0]), "correct") << results[0].dump(1);
  EXPECT_TRUE(JsonGet<bool>(results[0], "sandboxed", false));
}

TEST_F(IsolationTest, ACandidateWritesNothingOutsideItsOwnDirectory) {
  const std::string planted = "kp_planted_" + std::to_string(getpid()) + ".pth";
  const fs::path cache = dir_ / "cache";
  fs::create_directories(cache);
  const std::string user_site = (dir_ / "home/.local/lib/python3/site-packages").string();
  const std::string c =
      Candidate("write_outside.py",
                {{"planted_name", planted},
                 {"write_dirs",
                  {(dir_ / "home").string(), (dir_ / "cwd").string(), cache.string(), user_site,
                   fs::path(kTinySwish).parent_path().string(), (dir_ / "candidates").string()}}});
  auto results = Eval({c}, cache.string());
  ASSERT_EQ(results.size(), 1u) << last_stderr_;
  EXPECT_EQ(StatusOf(results[0]), "correct") << results[0].dump(1);
  std::vector<fs::path> looked = {dir_ / "home",
                                  dir_ / "cwd",
                                  cache,
                                  user_site,
                                  fs::path(kTinySwish).parent_path(),
                                  dir_ / "candidates",
                                  fs::temp_directory_path(),
                                  "/usr/lib/python3/dist-packages"};
  for (const fs::path& place : looked) {
    EXPECT_FALSE(fs::exists(place / planted)) << "planted in " << place;
  }
}

TEST_F(IsolationTest, ACandidateReachesNoNetworkNotEvenTheHostsLoopback) {
  Listener listener;
  const std::string c = Candidate("network.py", {{"port", listener.port()}});
  auto results = Eval({c});
  ASSERT_EQ(results.size(), 1u) << last_stderr_;
  EXPECT_EQ(StatusOf(results[0]), "correct") << results[0].dump(1);
  EXPECT_EQ(listener.Connections(), 0);
}

TEST_F(IsolationTest, NativeCodeInTheExtensionIsConfinedToo) {
  Listener listener;
  const fs::path plant = dir_ / "home/native_planted";
  const std::string c =
      Candidate("native_escape.py", {{"secret_file", (dir_ / "home/.ssh/id_rsa").string()},
                                     {"plant_file", plant.string()},
                                     {"port", listener.port()}});
  auto results = Eval({c});
  ASSERT_EQ(results.size(), 1u) << last_stderr_;
  EXPECT_EQ(StatusOf(results[0]), "correct") << results[0].dump(1);
  EXPECT_FALSE(fs::exists(plant));
  EXPECT_EQ(listener.Connections(), 0);
}

// A file of /proc; "" when its process is gone (reading a vanished process's file fails with
// ESRCH, which std::filebuf reports by throwing). Short-lived processes (a compiler asked for its
// version) come and go while the tests walk the tree.
std::string ReadProc(const std::string& path) {
  try {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return "";
  }
}

bool ProcessWithArgumentRuns(const std::string& argument) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string cmdline = ReadProc((entry.path() / "cmdline").string());
    if (cmdline.find(argument) != std::string::npos && cmdline.rfind("sleep", 0) == 0) return true;
  }
  return false;
}

bool EventuallyNoProcessWith(const std::string& argument) {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (ProcessWithArgumentRuns(argument) && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !ProcessWithArgumentRuns(argument);
}

TEST_F(IsolationTest, NoProcessACandidateStartsOutlivesItsEvaluation) {
  const std::string marker = "4242" + std::to_string(getpid()) + ".5";
  const std::string c = Candidate("outlive.py", {{"marker", marker}});
  auto results = Eval({c});
  ASSERT_EQ(results.size(), 1u) << last_stderr_;
  EXPECT_EQ(StatusOf(results[0]), "correct") << results[0].dump(1);
  EXPECT_TRUE(EventuallyNoProcessWith(marker));
}

TEST_F(IsolationTest, ACandidateCannotRewriteTheExpectedOutputsNorPoisonTheCacheForOthers) {
  const fs::path cache = dir_ / "cache";  // its own cache: the attack targets it
  const std::string good = kRoot + "/tests/candidates/good/cpu_tiny_swish.py";
  const std::string poison = Candidate("poison_reference.py", {{"cache_dirs", {cache.string()}}});
  auto first = Eval({poison, good}, cache.string());
  ASSERT_EQ(first.size(), 2u) << last_stderr_;
  EXPECT_EQ(StatusOf(first[0]), "incorrect") << first[0].dump(1);
  EXPECT_EQ(StatusOf(first[1]), "correct") << first[1].dump(1);
  // A later evaluation reuses the cached reference: it must still be right.
  auto second = Eval({good}, cache.string());
  ASSERT_EQ(second.size(), 1u) << last_stderr_;
  EXPECT_EQ(StatusOf(second[0]), "correct") << second[0].dump(1);
}

TEST_F(IsolationTest, AnOutputThatRunsCodeWhenUnpickledIsIncorrectAndRunsNothing) {
  const fs::path marker =
      fs::temp_directory_path() / ("kernelpro-pickle-pwned-" + std::to_string(getpid()));
  fs::remove(marker);
  const std::string c = Candidate("pickle_output.py", {{"marker_file", marker.string()}});
  auto results = Eval({c});
  ASSERT_EQ(results.size(), 1u) << last_stderr_;
  EXPECT_EQ(StatusOf(results[0]), "incorrect") << results[0].dump(1);
  EXPECT_NE(JsonGet<std::string>(results[0], "message", "").find("Sneaky"), std::string::npos)
      << results[0].dump(1);
  EXPECT_FALSE(fs::exists(marker));
}

// The process's parent, state and command line from /proc; 0 / "" when it is gone.
pid_t ParentOf(pid_t pid, char* state = nullptr) {
  const std::string stat = ReadProc("/proc/" + std::to_string(pid) + "/stat");
  if (stat.rfind(')') == std::string::npos) return 0;
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  char s = '?';
  pid_t parent = 0;
  rest >> s >> parent;
  if (state) *state = s;
  return parent;
}

std::string CommandLine(pid_t pid) { return ReadProc("/proc/" + std::to_string(pid) + "/cmdline"); }

// User + system CPU time of a process so far, in seconds (0 when it is gone).
double CpuSeconds(pid_t pid) {
  const std::string text = ReadProc("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
    if (i == 15) break;
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::vector<pid_t> Descendants(pid_t root) {
  std::vector<pid_t> found = {root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(name);
      if (std::find(found.begin(), found.end(), pid) != found.end()) continue;
      if (std::find(found.begin(), found.end(), ParentOf(pid)) != found.end()) {
        found.push_back(pid);
        grew = true;
      }
    }
  }
  found.erase(found.begin());
  return found;
}

bool EventuallyGone(pid_t pid) {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    char state = '?';
    if (ParentOf(pid, &state) == 0 || state == 'Z' || state == 'X') return true;
    if (Clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// kernelpro killed while a worker runs an endless loop: the worker must not run on.
void KillWhileAWorkerRuns(const fs::path& dir, int signal_number, const std::string& candidate) {
  ProcessOptions p;
  p.argv = {KERNELPRO_BINARY, "eval",
            "--device",       "cpu",
            "--trials",       "1",
            "--extra-trials", "0",
            "--timeout",      "600",
            "--cache-dir",    std::string(KERNELPRO_BINARY_DIR) + "/test-cache",
            "--problem",      kTinySwish,
            "--candidate",    candidate};
  // Started by hand (fork/exec) so that the test can signal it while it runs.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    std::vector<char*> argv;
    for (std::string& a : p.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  // A failed assertion below returns early: kernelpro and its workers must not run on (the
  // endless candidate would keep ctest waiting for its output until --timeout).
  struct Reaper {
    pid_t pid;
    bool reaped = false;
    ~Reaper() {
      if (reaped) return;
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  // The candidate's worker: a kernelpro descendant serving the candidate role (its request
  // folder is named after it). It starts before the build, so wait until it burns CPU in the
  // candidate's endless forward: killed mid-build, a build would leave its lock files behind
  // for other tests of the same cache.
  const auto give_up = Clock::now() + std::chrono::minutes(5);
  bool spinning = false;
  while (!spinning && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (pid_t d : Descendants(pid)) {
      const std::string command = CommandLine(d);
      const std::string program = command.substr(0, command.find('\0'));
      if (command.find("kernelpro-serve-candidate-") == std::string::npos ||
          program.find("bwrap") != std::string::npos) {
        continue;  // not the candidate's worker, or the sandbox around it
      }
      const double before = CpuSeconds(d);
      std::this_thread::sleep_for(std::chrono::seconds(1));
      spinning = CpuSeconds(d) - before > 0.8;  // a whole core: the loop, not an import
      break;
    }
  }
  ASSERT_TRUE(spinning) << "the candidate's forward never started";
  std::vector<pid_t> workers = Descendants(pid);
  kill(pid, signal_number);
  int status = 0;
  waitpid(pid, &status, 0);
  reaper.reaped = true;
  if (signal_number == SIGTERM) {
    EXPECT_TRUE(WIFEXITED(status)) << status;
    if (WIFEXITED(status)) EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  }
  for (pid_t worker : workers) {
    EXPECT_TRUE(EventuallyGone(worker))
        << "worker " << worker << " outlived kernelpro: " << CommandLine(worker);
  }
}

TEST_F(IsolationTest, WorkersDieWhenKernelproIsKilled) {
  KillWhileAWorkerRuns(dir_, SIGKILL, kRoot + "/tests/candidates/faults/cpu/endless_loop.py");
}

TEST_F(IsolationTest, WorkersDieWhenKernelproIsTerminated) {
  KillWhileAWorkerRuns(dir_, SIGTERM, kRoot + "/tests/candidates/faults/cpu/endless_loop.py");
}

// The attacks are real: without the sandbox the same candidates do get through, so the tests
// above would fail if the sandbox stopped confining them.
TEST_F(IsolationTest, WithoutTheSandboxTheSameAttacksSucceed) {
  Listener listener;
  const std::string secrets = Candidate(
      "read_secrets.py",
      {{"secret_files", {(dir_ / "home/.ssh/id_rsa").string()}}, {"secret_text", kSecretText}});
  const std::string network = Candidate("network.py", {{"port", listener.port()}});
  ProcessOptions unsafe = EvalCommand({secrets, network});
  unsafe.argv.push_back("--unsafe-no-sandbox");
  auto r = RunProcess(unsafe);
  ASSERT_TRUE(r.ok());
  std::istringstream lines(r->stdout_text);
  std::vector<Json> results;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) results.push_back(Json::parse(line, nullptr, false));
  }
  ASSERT_EQ(results.size(), 2u) << r->stdout_text << r->stderr_text;
  EXPECT_EQ(StatusOf(results[0]), "incorrect") << results[0].dump(1);
  EXPECT_EQ(StatusOf(results[1]), "incorrect") << results[1].dump(1);
  EXPECT_GT(listener.Connections(), 0);
}

TEST_F(IsolationTest, WithoutTheSandboxKernelproRefusesUnlessToldAndThenSaysSoInEveryResult) {
  ProcessOptions refused = EvalCommand({kRoot + "/tests/candidates/good/cpu_tiny_swish.py"});
  refused.env["KERNELPRO_BWRAP"] = "/nonexistent/bwrap";
  auto r = RunProcess(refused);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 2) << r->stdout_text << r->stderr_text;
  EXPECT_NE(r->stderr_text.find("--unsafe-no-sandbox"), std::string::npos) << r->stderr_text;

  ProcessOptions unsafe = refused;
  unsafe.argv.push_back("--unsafe-no-sandbox");
  r = RunProcess(unsafe);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0) << r->stderr_text;
  Json result = Json::parse(r->stdout_text.substr(0, r->stdout_text.find('\n')), nullptr, false);
  EXPECT_FALSE(JsonGet<bool>(result, "sandboxed", true)) << r->stdout_text;
  EXPECT_NE(JsonGet<std::string>(result, "sandbox", "").find("--unsafe-no-sandbox"),
            std::string::npos);
  EXPECT_NE(r->stderr_text.find("WARNING"), std::string::npos) << r->stderr_text;
}

}  // namespace eval_isolation_test
}  // namespace kernelpro::eval
