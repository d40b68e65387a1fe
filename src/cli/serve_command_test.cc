// `kernelpro serve` end to end on the CPU, a real server on loopback as a user runs it: its
// verdicts are `kernelpro eval`'s for honest, cheating and crashing candidates; clients at once;
// a restart after kill -9 still answers for what it journaled; SIGTERM drains.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "cli/cli_testing.h"
#include "core/json_io.h"

extern char** environ;

namespace kernelpro::cli {
namespace cli_serve_command_test {

namespace fs = std::filesystem;
using testing::RunKernelpro;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kProblem = kRoot + "/tests/problems/tiny_swish.py";
const std::string kHonest = kRoot + "/tests/candidates/good/cpu_tiny_swish.py";
const std::string kMutates = kRoot + "/tests/candidates/adversarial/cpu/mutate_input.py";
const std::string kSegfault = kRoot + "/tests/candidates/faults/cpu/segfault.py";
// Quick options, the same for the server and `kernelpro eval`.
const std::vector<std::string> kQuick = {"--shapes",        "off", "--trials",        "2",
                                         "--extra-trials",  "0",   "--timing-trials", "10",
                                         "--timing-rounds", "2"};

std::string Text(const std::string& path) {
  auto text = ReadFileText(path);
  return text.ok() ? *text : "";
}

// A `kernelpro serve` process of this test, its stderr in a file.
class Server {
 public:
  Server(const std::string& state, const std::string& dir)
      : log_(dir + "/serve-" + Next() + ".log") {
    std::vector<std::string> args = {
        KERNELPRO_BINARY,  "serve",
        "--device",        "cpu",
        "--port",          "0",
        "--state-dir",     state,
        "--work-dir",      dir + "/work",
        "--cache-dir",     std::string(KERNELPRO_BINARY_DIR) + "/test-cache",
        "--blank-workers", "1"};
    args.insert(args.end(), kQuick.begin(), kQuick.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    for (int i = 0; i < 600 && port_ == 0; ++i) {
      std::smatch m;
      const std::string text = Text(log_);
      if (std::regex_search(text, m, listening)) port_ = std::stoi(m[1]);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Server() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  int port() const { return port_; }
  std::string log() const { return Text(log_); }
  void Signal(int signal_number) const { ::kill(pid_, signal_number); }
  // The exit status once it ended.
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(300, 0);
    return client;
  }

 private:
  static std::string Next() {
    static std::atomic<int> n{0};
    return std::to_string(n++);
  }
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

std::string Body(const std::string& candidate, bool async = false) {
  Json body{{"problem_source", Text(kProblem)}, {"candidate_source", Text(candidate)}};
  if (async) body["async"] = true;
  return body.dump();
}

class ServeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/serve_command_" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    state_ = dir_ + "/state";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, state_;
};

TEST_F(ServeCommandTest, AnswersAsEvalDoesForHonestCheatingAndCrashingCandidates) {
  std::vector<std::string> args = {
      "eval",       "--device",         "cpu",
      "--problem",  kProblem,           "--json",
      "--quiet",    "--cache-dir",      std::string(KERNELPRO_BINARY_DIR) + "/test-cache",
      "--work-dir", dir_ + "/eval-work"};
  for (const std::string& c : {kHonest, kMutates, kSegfault}) {
    args.push_back("--candidate");
    args.push_back(c);
  }
  args.insert(args.end(), kQuick.begin(), kQuick.end());
  testing::CliRun eval = RunKernelpro(args, 10);
  std::vector<Json> expected;
  std::istringstream lines(eval.out);
  for (std::string line; std::getline(lines, line);) expected.push_back(Json::parse(line));
  ASSERT_EQ(expected.size(), 3u) << eval.out << eval.err;

  Server server(state_, dir_);
  ASSERT_GT(server.port(), 0) << server.log();
  httplib::Client client = server.Client();
  const std::vector<std::string> candidates = {kHonest, kMutates, kSegfault};
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto res = client.Post("/v1/eval", Body(candidates[i]), "application/json");
    ASSERT_TRUE(res) << server.log();
    ASSERT_EQ(res->status, 200) << res->body;
    Json verdict = Json::parse(res->body);
    EXPECT_EQ(verdict["status"], expected[i]["status"]) << candidates[i] << "\n" << res->body;
    EXPECT_EQ(verdict["criterion"], expected[i]["criterion"]);
    EXPECT_EQ(verdict["message"], expected[i]["message"]) << candidates[i];
  }
  // A hanging candidate ends its own job at the request's timeout; the server goes on.
  Json hang{{"problem_source", Text(kProblem)},
            {"candidate_source", Text(kRoot + "/tests/candidates/faults/cpu/endless_loop.py")},
            {"options", {{"timeout", 3}}}};
  auto hung = client.Post("/v1/eval", hang.dump(), "application/json");
  ASSERT_TRUE(hung);
  EXPECT_EQ(Json::parse(hung->body)["status"], "timeout") << hung->body;
  // Several clients at once: each gets its verdict, one evaluation on the device at a time.
  std::vector<std::thread> clients;
  std::atomic<int> correct{0};
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back([&] {
      httplib::Client c = server.Client();
      auto res = c.Post("/v1/eval", Body(kHonest), "application/json");
      if (res && res->status == 200 && Json::parse(res->body)["status"] == "correct") ++correct;
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(correct.load(), 3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(3));
  Json health = Json::parse(client.Get("/v1/health")->body);
  EXPECT_EQ(health["candidates_given_fresh_processes"], 0) << health.dump();
  EXPECT_EQ(health["candidates_given_blank_workers"], 7);
}

TEST_F(ServeCommandTest, AfterKillNineARestartAnswersForWhatItJournaledAndServesAtOnce) {
  std::string job;
  Json verdict;
  {
    Server server(state_, dir_);
    ASSERT_GT(server.port(), 0) << server.log();
    httplib::Client client = server.Client();
    auto accepted = client.Post("/v1/eval", Body(kHonest, /*async=*/true), "application/json");
    ASSERT_TRUE(accepted);
    ASSERT_EQ(accepted->status, 202);
    job = Json::parse(accepted->body)["job"];
    for (int i = 0; i < 1200; ++i) {
      verdict = Json::parse(client.Get(("/v1/jobs/" + job).c_str())->body);
      if (verdict["state"] != "queued" && verdict["state"] != "running") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(verdict["state"], "done") << verdict.dump();
    server.Signal(SIGKILL);
    server.Wait();
  }
  Server again(state_, dir_);
  ASSERT_GT(again.port(), 0) << again.log();
  httplib::Client client = again.Client();
  auto health = client.Get("/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto res = client.Get(("/v1/jobs/" + job).c_str());
  ASSERT_TRUE(res);
  EXPECT_EQ(Json::parse(res->body), verdict) << "the verdict survived kill -9";
}

TEST_F(ServeCommandTest, SigtermFinishesTheRunningEvaluationRefusesNewOnesAndExits) {
  Server server(state_, dir_);
  ASSERT_GT(server.port(), 0) << server.log();
  std::optional<httplib::Result> running;
  std::thread first([&] {
    httplib::Client c = server.Client();
    running = c.Post("/v1/eval", Body(kHonest), "application/json");
  });
  httplib::Client client = server.Client();
  for (int i = 0; i < 600; ++i) {
    auto health = client.Get("/v1/health");
    if (health && Json::parse(health->body)["running"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  server.Signal(SIGTERM);
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    auto res = client.Post("/v1/eval", Body(kHonest), "application/json");
    refused = !res || res->status == 503;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(refused) << "a draining server takes no new evaluation";
  first.join();
  ASSERT_TRUE(running && *running) << server.log();
  EXPECT_EQ((*running)->status, 200) << (*running)->body;
  EXPECT_EQ(Json::parse((*running)->body)["status"], "correct");
  const int status = server.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << server.log();
  EXPECT_NE(server.log().find("kernelpro serve: stopped"), std::string::npos) << server.log();
}

TEST_F(ServeCommandTest, AnAddressOtherThanLoopbackWantsAToken) {
  testing::CliRun run = RunKernelpro({"serve", "--device", "cpu", "--host", "0.0.0.0"}, 1);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--host 0.0.0.0 is reachable from other machines: give --token-file"),
            std::string::npos)
      << run.err;
}

}  // namespace cli_serve_command_test
}  // namespace kernelpro::cli
