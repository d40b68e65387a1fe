// `kernelpro suite` as a researcher runs it: a CPU suite evaluated for real by the worker (a
// correct candidate, a broken one, a problem without candidates), killed and resumed, its status
// and reports; reports and comparisons over suites written by hand (their files are the format).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "cli/cli_testing.h"
#include "core/json_io.h"
#include "suite/suite_lock.h"

namespace kernelpro::cli {
namespace cli_suite_command_test {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::RunKernelpro;
using testing::RunKernelproWithHooks;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
// Builds and references are cached in the cache every test of this build tree shares.
const std::string kCache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SuiteCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kp_suite_cli_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // level1: tiny_swish (a correct candidate and a broken one), relu_rand (no candidate);
  // level2: small_linear (a correct candidate).
  void MakeCpuSuite() {
    Link("problems/level1/1_tiny_swish.py", "tests/problems/tiny_swish.py");
    Link("problems/level1/2_relu_rand.py", "tests/problems/relu_rand.py");
    Link("problems/level2/1_small_linear.py", "tests/problems/small_linear.py");
    Link("cands/1_tiny_swish/a_good.py", "tests/candidates/good/cpu_tiny_swish.py");
    Write("cands/1_tiny_swish/b_broken.py", "import torch\nthis is not python\n");
    Link("cands/1_small_linear.py", "tests/candidates/good/cpu_small_linear.py");
  }
  void Link(const std::string& at, const std::string& target) {
    fs::create_directories((root_ / at).parent_path());
    fs::create_symlink(kRoot + "/" + target, root_ / at);
  }
  void Write(const std::string& at, const std::string& text) {
    fs::create_directories((root_ / at).parent_path());
    std::ofstream(root_ / at) << text;
  }
  std::vector<std::string> EvalArgs(const std::string& suite) {
    return {"suite",           "eval",
            "--problems",      (root_ / "problems").string(),
            "--candidates",    (root_ / "cands").string(),
            "--dir",           (root_ / suite).string(),
            "--device",        "cpu",
            "--cache-dir",     kCache,
            "--timing-trials", "10",
            "--quiet"};
  }
  fs::path root_;
};

TEST_F(SuiteCommandTest, ACpuSuiteIsEvaluatedReportedAndNotRedone) {
  MakeCpuSuite();
  CliRun run = RunKernelpro(EvalArgs("suite"), 20);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("suite: 3/3 done (2 correct)"), std::string::npos) << run.out;

  const fs::path suite = root_ / "suite";
  Json swish = *ReadJsonFile((suite / "tasks/level1/1_tiny_swish/result.json").string());
  EXPECT_EQ(swish["status"], "correct");
  EXPECT_EQ(fs::path(swish["best"].get<std::string>()).filename(), "a_good.py");
  ASSERT_EQ(swish["candidates"].size(), 2u);
  EXPECT_EQ(swish["candidates"][1]["status"], "compile_error");
  EXPECT_GT(swish["speedup"].get<double>(), 0);
  EXPECT_EQ(swish["environment"]["device"], "cpu");
  Json relu = *ReadJsonFile((suite / "tasks/level1/2_relu_rand/result.json").string());
  EXPECT_EQ(relu["status"], "no_candidate");

  // A second writer while one runs (held here as a running `suite eval` holds it) is refused,
  // with the holder named and how to follow it; nothing of the suite changes.
  {
    auto held = ::kernelpro::suite::SuiteLock::Acquire(::kernelpro::suite::SuiteDir(suite.string()),
                                                       0, 1, "suite eval");
    ASSERT_TRUE(held.ok()) << held.status().message();
    CliRun refused = RunKernelpro(EvalArgs("suite"), 5);
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(
        refused.err.find("is being run by kernelpro suite eval (PID " + std::to_string(::getpid())),
        std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("kernelpro suite status " + suite.string()), std::string::npos)
        << refused.err;
  }

  // Again: nothing is redone (every task had its result).
  CliRun again = RunKernelpro(EvalArgs("suite"), 5);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("ran 0 tasks here (0 failed); 3 were done before"), std::string::npos)
      << again.out;

  CliRun status = RunKernelpro({"suite", "status", suite.string(), "--json"}, 1);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.json["done"], 3);
  EXPECT_EQ(status.json["correct"], 2);
  EXPECT_EQ(status.json["pending"], 0);
  for (const Json& task : status.json["tasks"]) {  // a CPU suite: its time, no device memory
    EXPECT_GT(task["seconds"].get<double>(), 0) << task;
    EXPECT_TRUE(task["peak_device_bytes"].is_null()) << task;
  }

  CliRun report = RunKernelpro({"suite", "report", suite.string(), "--json"}, 1);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const Json& overall = report.json["overall"];
  EXPECT_EQ(overall["n"], 3);
  EXPECT_NEAR(overall["correct_rate"].get<double>(), 2.0 / 3, 1e-9);
  for (const char* p : {"0", "0.5", "0.8", "1.0", "1.5", "2.0"}) {
    EXPECT_TRUE(overall["fast_p"].contains(p)) << p;
  }
  EXPECT_NEAR(overall["fast_p"]["0"].get<double>(), 2.0 / 3, 1e-9);
  EXPECT_TRUE(report.json["levels"].contains("1"));
  EXPECT_TRUE(report.json["levels"].contains("2"));
  for (const char* file : {"report.html", "report.md", "results.csv", "report.json"}) {
    EXPECT_TRUE(fs::exists(suite / "report" / file)) << file;
  }
  const std::string html = ReadFile(suite / "report/report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("1_tiny_swish"), std::string::npos);
}

TEST_F(SuiteCommandTest, AKilledSuiteResumesWithNothingLostOrRedone) {
  MakeCpuSuite();
  const fs::path suite = root_ / "suite";
  // Killed with SIGKILL right after the first candidate's verdict is saved: in the middle of
  // tiny_swish (its second candidate not yet evaluated), with small_linear not started.
  CliRun killed =
      RunKernelproWithHooks(EvalArgs("suite"), 20, {{"KERNELPRO_TEST_KILL_AFTER_VERDICTS", "1"}});
  ASSERT_NE(killed.exit_code, 0);
  ASSERT_TRUE(fs::exists(suite / "tasks/level1/1_tiny_swish/candidates/000.json"));
  ASSERT_FALSE(fs::exists(suite / "tasks/level1/1_tiny_swish/candidates/001.json"));
  ASSERT_FALSE(fs::exists(suite / "tasks/level1/1_tiny_swish/result.json"));
  // What it finished is kept as it was.
  std::map<std::string, fs::file_time_type> kept;
  for (const auto& entry : fs::recursive_directory_iterator(suite / "tasks")) {
    if (entry.path().extension() == ".json" && entry.path().filename() != "claim.json") {
      kept[entry.path().string()] = fs::last_write_time(entry.path());
    }
  }
  CliRun status = RunKernelpro({"suite", "status", suite.string()}, 1);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  // The dead process's claim is not "running": the task is interrupted, and resume reruns it.
  EXPECT_NE(status.out.find("running 0, interrupted 1"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("interrupted  level1/1_tiny_swish"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("kernelpro suite resume"), std::string::npos) << status.out;
  CliRun resumed =
      RunKernelpro({"suite", "resume", suite.string(), "--cache-dir", kCache, "--quiet"}, 20);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("suite: 3/3 done (2 correct)"), std::string::npos) << resumed.out;
  for (const auto& [path, time] : kept) {
    EXPECT_EQ(fs::last_write_time(path), time) << path << " was written again";
  }
}

// `suite optimize` on CPU with a replayed model. Each task's run is a child process handed its run
// as a request (cli/run_request.h); killed mid-run (the child, through the tests' hook binary),
// the task is an error, and `suite resume` continues that same run without asking twice.
TEST_F(SuiteCommandTest, AnOptimizeSuiteResumesAKilledRunWhereItStopped) {
  Link("problems/level1/1_tiny_swish.py", "tests/problems/tiny_swish.py");
  const fs::path suite = root_ / "suite";
  const fs::path task = suite / "tasks/level1/1_tiny_swish";
  const std::string cassette = kRoot + "/tests/fixtures/cassettes/optimize_cpu_tiny_swish.jsonl";
  // Builds are shared with the optimize tests, which run the same cassette.
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";
  const std::vector<std::string> args = {"suite",
                                         "optimize",
                                         "--problems",
                                         (root_ / "problems").string(),
                                         "--dir",
                                         suite.string(),
                                         "--device",
                                         "cpu",
                                         "--llm",
                                         "replay:" + cassette,
                                         "--llm-replay-mode",
                                         "sequential",
                                         "--iterations",
                                         "3",
                                         "--cache-dir",
                                         cache,
                                         "--python",
                                         "/usr/bin/python3",
                                         "--quiet",
                                         "--",
                                         "--candidates",
                                         "2",
                                         "--no-memory",
                                         "--trials",
                                         "2",
                                         "--extra-trials",
                                         "1",
                                         "--timing-trials",
                                         "20",
                                         "--timing-rounds",
                                         "1",
                                         "--time-budget",
                                         "2"};
  // The run is killed right after its second iteration's generation was journaled.
  CliRun killed =
      RunKernelproWithHooks(args, 20, {{"KERNELPRO_TEST_KILL_AFTER_STEP", "generate@2"}});
  EXPECT_EQ(killed.exit_code, 1) << killed.out << killed.err;
  auto first = ReadJsonFile((task / "result.json").string());
  ASSERT_TRUE(first.ok()) << killed.out << killed.err;
  EXPECT_EQ((*first)["status"], "error") << first->dump(2);
  EXPECT_EQ(JsonGet<std::string>(*first, "message", "").rfind("kernelpro optimize killed", 0), 0u)
      << first->dump(2);
  std::string log = ReadFile(task / "log.txt");
  EXPECT_NE(log.find(" optimize --run-request -\n{\"config\":"), std::string::npos) << log;
  EXPECT_NE(log.find("\"start\":\"optimize\""), std::string::npos) << log;
  ASSERT_TRUE(fs::exists(task / "run/run.db"));

  CliRun resumed = RunKernelpro({"suite", "resume", suite.string(), "--cache-dir", cache,
                                 "--python", "/usr/bin/python3", "--quiet"},
                                20, {}, {"KERNELPRO_TEST_KILL_AFTER_STEP"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("suite: 1/1 done (1 correct)"), std::string::npos) << resumed.out;
  auto done = ReadJsonFile((task / "result.json").string());
  ASSERT_TRUE(done.ok());
  EXPECT_EQ((*done)["status"], "correct") << done->dump(2);
  EXPECT_EQ((*done)["iterations"], 3) << done->dump(2);
  EXPECT_EQ((*done)["attempts"], 2) << done->dump(2);
  EXPECT_GT(JsonGet<double>(*done, "speedup", 0), 0) << done->dump(2);
  // best.py exactly when the run showed a kernel faster than the reference (on a loaded CPU its
  // faster kernel may time too noisily to be): the result says which.
  EXPECT_EQ(fs::exists(task / "run/best.py"), done->contains("best_node")) << done->dump(2);
  if (!done->contains("best_node")) EXPECT_EQ((*done)["answer"], "reference") << done->dump(2);
  log = ReadFile(task / "log.txt");
  EXPECT_NE(log.find("\"start\":\"resume\""), std::string::npos) << log;
  EXPECT_NE(log.find("stopped: 3 iterations done"), std::string::npos) << log;
}

// A suite's files written by hand: what `suite report` reads.
// `criterion` "": results from before criteria were named.
void WriteSuite(const fs::path& dir, const std::vector<std::pair<std::string, double>>& speedups,
                const fs::path& problems, double compile_speedup = 0,
                const std::string& criterion = "strict") {
  Json problem_list = Json::array(), tasks = Json::array();
  for (std::size_t i = 0; i < speedups.size(); ++i) {
    const std::string name = std::to_string(i + 1) + "_" + speedups[i].first;
    const fs::path file = problems / "level1" / (name + ".py");
    fs::create_directories(file.parent_path());
    if (!fs::exists(file)) std::ofstream(file) << "# " << name << "\n";
    problem_list.push_back({{"key", "level1/" + name},
                            {"name", name},
                            {"level", 1},
                            {"path", file.string()},
                            {"sha256", ""},
                            {"task", i + 1}});
    tasks.push_back({{"id", "level1/" + name}, {"problem", i}, {"seed", 0}, {"candidates", {}}});
    Json result = {{"task", "level1/" + name}, {"mode", "eval"}, {"level", 1}};
    if (!criterion.empty()) result["criterion"] = criterion;
    if (speedups[i].second > 0) {
      result["status"] = "correct";
      result["correct"] = true;
      result["speedup"] = speedups[i].second;
      result["speedup_interval"] = {speedups[i].second * 0.98, speedups[i].second * 1.02};
    } else {
      result["status"] = "incorrect";
      result["correct"] = false;
      result["message"] = "outputs differ";
    }
    result["environment"] = {{"device", "cuda"},         {"gpu_name", "NVIDIA H200"},
                             {"driver", "580.95.05"},    {"sm_clock_mhz", 1980},
                             {"max_sm_clock_mhz", 1980}, {"memory_clock_mhz", 3201}};
    if (compile_speedup > 0) {
      result["baselines"] = {{"eager_ms", 1.0},
                             {"compile_ms", 1.0 / compile_speedup},
                             {"compile_speedup", compile_speedup},
                             {"gpu_name", "NVIDIA H200"}};
    }
    result["started_at"] = "2026-12-01T00:00:00Z";
    result["finished_at"] = "2026-12-01T00:01:00Z";
    result["seconds"] = 60;
    ASSERT_TRUE(WriteJsonFile((dir / "tasks/level1" / name / "result.json").string(), result).ok());
  }
  // Hashes are left empty: a manifest from before the files existed would be refused otherwise.
  Json manifest = {{"mode", "eval"},
                   {"problems_dir", problems.string()},
                   {"candidates_dir", ""},
                   {"problems", problem_list},
                   {"tasks", tasks},
                   {"options", Json::object()},
                   {"created_at", "2026-12-01T00:00:00Z"},
                   {"version", "test"}};
  ASSERT_TRUE(WriteJsonFile((dir / "suite.json").string(), manifest).ok());
}

// Best of runs follows the interval rule (search/best_rule.h): of a problem's runs, a noisy 3.27x
// [1.59, 5.01] does not displace a clear 2.12x [1.99, 2.45].
TEST_F(SuiteCommandTest, AProblemsBestRunIsChosenByItsIntervalNotANoisyEstimate) {
  const fs::path dir = root_ / "runs", file = root_ / "problems" / "level1" / "1_p.py";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "# p\n";
  Json tasks = Json::array();
  const std::vector<std::tuple<double, double, double, bool>> runs = {
      {2.12, 1.99, 2.45, false}, {3.27, 1.59, 5.01, true}, {0.9, 0.8, 1.0, false}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string id = "level1/1_p/seed-" + std::to_string(i + 1);
    tasks.push_back({{"id", id}, {"problem", 0}, {"seed", i + 1}, {"candidates", Json::array()}});
    const auto& [estimate, low, high, noisy] = runs[i];
    Json result = {{"task", id},
                   {"mode", "eval"},
                   {"level", 1},
                   {"status", "correct"},
                   {"correct", true},
                   {"speedup", estimate},
                   {"noisy", noisy},
                   {"seconds", 60},
                   {"speedup_interval", {low, high}},
                   {"started_at", "2026-12-01T00:00:00Z"},
                   {"finished_at", "2026-12-01T00:01:00Z"}};
    ASSERT_TRUE(WriteJsonFile((dir / "tasks" / id / "result.json").string(), result).ok());
  }
  Json manifest = {{"mode", "eval"},
                   {"problems_dir", (root_ / "problems").string()},
                   {"candidates_dir", ""},
                   {"problems",
                    {{{"key", "level1/1_p"},
                      {"name", "1_p"},
                      {"level", 1},
                      {"path", file.string()},
                      {"sha256", ""},
                      {"task", 1}}}},
                   {"tasks", tasks},
                   {"options", Json::object()},
                   {"created_at", "2026-12-01T00:00:00Z"},
                   {"version", "test"}};
  ASSERT_TRUE(WriteJsonFile((dir / "suite.json").string(), manifest).ok());
  CliRun report = RunKernelpro({"suite", "report", dir.string(), "--json"}, 1);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  ASSERT_EQ(report.json["problems"].size(), 1u) << report.out;
  EXPECT_DOUBLE_EQ(report.json["problems"][0]["speedup"].get<double>(), 2.12) << report.out;
  EXPECT_FALSE(report.json["problems"][0]["noisy"].get<bool>());
}

TEST_F(SuiteCommandTest, TwoSuitesAreComparedWithAOneSidedWilcoxonTest) {
  // 8 problems; the first suite is faster on 7 of them, one failure in the second.
  WriteSuite(root_ / "a",
             {{"p", 2.0},
              {"q", 3.0},
              {"r", 1.5},
              {"s", 4.0},
              {"t", 1.2},
              {"u", 2.5},
              {"v", 1.1},
              {"w", 0.9}},
             root_ / "problems");
  WriteSuite(root_ / "b",
             {{"p", 1.0},
              {"q", 1.5},
              {"r", 1.4},
              {"s", 2.0},
              {"t", 1.0},
              {"u", 0},
              {"v", 1.0},
              {"w", 1.0}},
             root_ / "problems");
  CliRun report = RunKernelpro(
      {"suite", "report", (root_ / "a").string(), "--compare", (root_ / "b").string(), "--json"},
      1);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const Json& w = report.json["wilcoxon"];
  // Differences ln(a/b): 7 positive, 1 negative (w: 0.9 vs 1.0, the smallest |d| but one).
  EXPECT_EQ(w["n"], 8);
  EXPECT_TRUE(w["exact"].get<bool>());
  // Ranks of |ln ratio|: w 0.105 (2), v 0.095 (1), r 0.069... computed: W+ = 36 - rank(w).
  EXPECT_GT(w["statistic"].get<double>(), 30);
  EXPECT_LT(w["p_value"].get<double>(), 0.02);
  EXPECT_EQ(report.json["overall"]["n"], 8);
  CliRun text = RunKernelpro(
      {"suite", "report", (root_ / "a").string(), "--compare", (root_ / "b").string()}, 1);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("one-sided Wilcoxon signed-rank, n = 8"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("NVIDIA H200, driver 580.95.05"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not locked by kernelpro"), std::string::npos) << text.out;
}

TEST_F(SuiteCommandTest, AnUnfinishedOrDamagedSuiteSaysSoFirstAndScoresOnlyWhatFinished) {
  WriteSuite(root_ / "a", {{"p", 2.0}, {"q", 3.0}, {"r", 1.5}, {"s", 4.0}}, root_ / "problems");
  fs::remove(root_ / "a/tasks/level1/2_q/result.json");                  // still to run
  std::ofstream(root_ / "a/tasks/level1/3_r/result.json") << "{\"stat";  // cut short
  CliRun report = RunKernelpro({"suite", "report", (root_ / "a").string()}, 1);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string first = report.out.substr(report.out.find('\n') + 1);
  EXPECT_EQ(first.rfind("  unfinished: 2 of 4 tasks have a result (1 pending, 1 damaged: "
                        "level1/3_r); the statistics cover the 2 of 4 problems whose tasks all "
                        "finished\n",
                        0),
            0u)
      << report.out;
  // The statistics: the two finished problems, both correct; nothing counted as a failure.
  EXPECT_NE(report.out.find("overall: n=2, correct 100%"), std::string::npos) << report.out;
  const std::string md = ReadFile(root_ / "a/report/report.md");
  EXPECT_NE(md.find("**unfinished: 2 of 4 tasks have a result"), std::string::npos);
  EXPECT_LT(md.find("**unfinished"), md.find("Measured:"));
  CliRun json = RunKernelpro({"suite", "report", (root_ / "a").string(), "--json"}, 1);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.json["tasks"]["damaged"], 1);
  EXPECT_EQ(json.json["tasks"]["pending"], 1);
  EXPECT_EQ(json.json["overall"]["n"], 2);
  for (const Json& row : json.json["problems"]) {
    if (row["key"] == "level1/3_r") EXPECT_EQ(row["status"], "damaged") << row;
    if (row["key"] == "level1/2_q") EXPECT_EQ(row["status"], "pending") << row;
  }
  CliRun required =
      RunKernelpro({"suite", "report", (root_ / "a").string(), "--require-complete"}, 1);
  EXPECT_EQ(required.exit_code, 1);
  EXPECT_NE(required.err.find("--require-complete: unfinished: 2 of 4"), std::string::npos)
      << required.err;
  CliRun status = RunKernelpro({"suite", "status", (root_ / "a").string()}, 1);
  EXPECT_NE(status.out.find(", damaged 1\n"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("damaged  level1/3_r"), std::string::npos) << status.out;
}

// Each task's wall time and peak device memory (its verdicts' processes together), in status and
// in the report's rows.
TEST_F(SuiteCommandTest, StatusAndReportSayWhatEachTaskCost) {
  const fs::path suite = root_ / "a";
  WriteSuite(suite, {{"p", 2.0}, {"q", 3.0}, {"r", 1.5}}, root_ / "problems");
  const long long gib = 1LL << 30;
  // seconds; referee and candidate peaks in GiB (none: a CPU verdict)
  const std::vector<std::tuple<std::string, double, long long, long long>> costs = {
      {"level1/1_p", 125, 21, 12}, {"level1/2_q", 161, 19, 22}, {"level1/3_r", 33, 0, 0}};
  auto manifest = ReadJsonFile((suite / "suite.json").string());
  ASSERT_TRUE(manifest.ok());
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const auto& [id, seconds, referee, candidate] = costs[i];
    (*manifest)["tasks"][i]["candidates"] = {(root_ / "cands/x.py").string()};
    const fs::path task = suite / "tasks" / id;
    auto result = ReadJsonFile((task / "result.json").string());
    ASSERT_TRUE(result.ok());
    (*result)["seconds"] = seconds;
    (*result)["candidates"] = Json::array({Json{{"status", "correct"}}});
    ASSERT_TRUE(WriteJsonFile((task / "result.json").string(), *result).ok());
    Json verdict = {{"status", "correct"}, {"peak_device_bytes", nullptr}};
    if (referee > 0) {
      verdict["peak_device_bytes"] = {{"referee", {{"reference", referee * gib}}},
                                      {"candidate", {{"time", candidate * gib}}},
                                      {"min_free_bytes", 37 * gib}};
    }
    ASSERT_TRUE(WriteJsonFile((task / "candidates/000.json").string(), verdict).ok());
  }
  ASSERT_TRUE(WriteJsonFile((suite / "suite.json").string(), *manifest).ok());

  CliRun status = RunKernelpro({"suite", "status", suite.string()}, 1);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("pending 0\n  slowest: level1/2_q (2m41s, 41.0 GiB), level1/1_p "
                            "(2m05s, 33.0 GiB), level1/3_r (33s)\n"),
            std::string::npos)
      << status.out;
  CliRun json = RunKernelpro({"suite", "status", suite.string(), "--json"}, 1);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const Json& q = json.json["tasks"][1];
  EXPECT_DOUBLE_EQ(q["seconds"].get<double>(), 161);
  EXPECT_EQ(q["peak_device_bytes"].get<long long>(), 41 * gib);
  EXPECT_EQ(q["min_free_bytes"].get<long long>(), 37 * gib);
  EXPECT_TRUE(json.json["tasks"][2]["peak_device_bytes"].is_null());

  CliRun report = RunKernelpro({"suite", "report", suite.string(), "--json"}, 1);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_DOUBLE_EQ(report.json["problems"][0]["seconds"].get<double>(), 125);
  EXPECT_EQ(report.json["problems"][0]["peak_device_bytes"].get<long long>(), 33 * gib);
  const std::string md = ReadFile(suite / "report/report.md");
  EXPECT_NE(md.find("| 1 | 161.0 | 41.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 33.0 | - |"), std::string::npos) << md;
  const std::string csv = ReadFile(suite / "report/results.csv");
  EXPECT_NE(csv.find(",message,seconds,peak_device_bytes\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",161," + std::to_string(41 * gib) + "\n"), std::string::npos) << csv;
}

TEST_F(SuiteCommandTest, TheProtocolPaperRecordsFifteenRunsPerTaskAtItsTemperatures) {
  // A KernelBench-like folder with three tasks, a list naming two of them, and an sbatch that
  // accepts the job array: the suite is made and submitted, nothing runs here.
  MakeCpuSuite();
  Write("only.txt", "# two of the three\nlevel1: 1 2\n");
  Write("bin/sbatch", "#!/bin/sh\necho 4711\n");
  fs::permissions(root_ / "bin/sbatch", fs::perms::owner_all);
  const std::map<std::string, std::string> env = {
      {"PATH", (root_ / "bin").string() + ":" + std::getenv("PATH")}};
  const std::string cassette = kRoot + "/tests/fixtures/cassettes/optimize_cpu_tiny_swish.jsonl";
  CliRun made = RunKernelpro(
      {"suite", "optimize", "--problems", (root_ / "problems").string(), "--tasks",
       (root_ / "only.txt").string(), "--llm", "replay:" + cassette, "--device", "cpu", "--dir",
       (root_ / "s").string(), "--protocol", "paper", "--slurm=-t 10", "--", "--feedback", "raw"},
      1, env);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto manifest = ReadJsonFile((root_ / "s/suite.json").string());
  ASSERT_TRUE(manifest.ok()) << manifest.status().message();
  const Json& tasks = (*manifest)["tasks"];
  ASSERT_EQ(tasks.size(), 30u) << "15 runs for each of the 2 listed tasks";
  const std::vector<double> expected = {0.2, 0.33, 0.45, 0.57, 0.7};
  for (std::size_t k = 0; k < 15; ++k) {
    EXPECT_DOUBLE_EQ(tasks[k]["temperature"].get<double>(), expected[k % 5]) << k;
  }
  const Json& options = (*manifest)["options"];
  EXPECT_EQ(options["protocol"]["name"], "paper");
  EXPECT_EQ(options["protocol"]["cap"], 25);
  // The conditions are derived from the runs' options, not stored beside them: the report's
  // "conditions:" line below says each of them.
  EXPECT_EQ(options.find("conditions"), options.end());
  const std::string args = options["args"].dump();
  EXPECT_NE(args.find(R"("--iterations","30")"), std::string::npos) << args;
  EXPECT_NE(args.find(R"("--candidates","2")"), std::string::npos) << args;
  // The report states the protocol, the list and the conditions before any result exists.
  CliRun report = RunKernelpro({"suite", "report", (root_ / "s").string()}, 1);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("protocol: paper: 15 runs per task (temperatures 0.2, 0.33, 0.45, "
                            "0.57, 0.7 x 3 rounds), best of runs; 30 iterations x 2 "
                            "candidates; unsolved = 1.0x; speedups capped at 25x"),
            std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("conditions: correctness strict, energy off, feedback raw, memory "
                            "on, search mcts"),
            std::string::npos)
      << report.out;

  // The protocol fixes the iterations; a list the problems do not hold is named.
  CliRun fixed = RunKernelpro({"suite", "optimize", "--problems", (root_ / "problems").string(),
                               "--llm", "replay:" + cassette, "--dir", (root_ / "t").string(),
                               "--protocol", "paper", "--iterations", "5"},
                              1, env);
  EXPECT_EQ(fixed.exit_code, 2);
  EXPECT_NE(fixed.err.find("--protocol paper runs 30 iterations"), std::string::npos) << fixed.err;
  CliRun holes =
      RunKernelpro({"suite", "optimize", "--problems", (root_ / "problems").string(), "--tasks",
                    "paper-42", "--llm", "replay:" + cassette, "--dir", (root_ / "u").string()},
                   1, env);
  EXPECT_EQ(holes.exit_code, 2);
  EXPECT_NE(holes.err.find("--tasks paper-42: the problems lack 41 of its 42 tasks (level1 task "
                           "6, level1 task 7"),
            std::string::npos)
      << holes.err;
}

TEST_F(SuiteCommandTest, SuitesJudgedByDifferentCorrectnessCriteriaAreNotCompared) {
  // The paper's criterion (allclose only) against kernelpro's strict one: a TF32 kernel counted
  // correct in one is incorrect in the other, so the pairs would not measure the same thing.
  WriteSuite(root_ / "strict", {{"p", 2.0}, {"q", 0}}, root_ / "problems", 0, "strict");
  WriteSuite(root_ / "kb", {{"p", 2.0}, {"q", 1.8}}, root_ / "problems", 0, "kernelbench");
  CliRun refused = RunKernelpro(
      {"suite", "report", (root_ / "kb").string(), "--compare", (root_ / "strict").string()}, 2);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.err.find("--compare: the suites were judged by different correctness "
                             "criteria (kb: kernelbench; strict: strict)"),
            std::string::npos)
      << refused.err;
  // Each report names its criterion.
  CliRun alone = RunKernelpro({"suite", "report", (root_ / "kb").string()}, 1);
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_NE(alone.out.find("correctness: kernelbench"), std::string::npos) << alone.out;
  EXPECT_NE(ReadFile(root_ / "kb/report/report.md").find("correctness: kernelbench"),
            std::string::npos);
  // A suite from before criteria were named is compared, with a caution in the report.
  WriteSuite(root_ / "old", {{"p", 1.0}, {"q", 1.0}}, root_ / "problems", 0, "");
  CliRun cautioned = RunKernelpro(
      {"suite", "report", (root_ / "strict").string(), "--compare", (root_ / "old").string()}, 1);
  ASSERT_EQ(cautioned.exit_code, 0) << cautioned.err;
  EXPECT_NE(cautioned.err.find("caution: old has results made before kernelpro named its "
                               "correctness criterion"),
            std::string::npos)
      << cautioned.err;
  EXPECT_NE(ReadFile(root_ / "strict/report/report.md")
                .find("Caution: old has results made before kernelpro named its correctness"),
            std::string::npos);
}

TEST_F(SuiteCommandTest, SpeedupsAgainstTorchCompileAreLabelledAndDividedByItsOwnSpeedup) {
  // torch.compile is 2x faster than eager on every problem here.
  WriteSuite(root_ / "a", {{"p", 4.0}, {"q", 1.0}, {"r", 0}}, root_ / "problems", 2.0);
  CliRun eager = RunKernelpro({"suite", "report", (root_ / "a").string(), "--json"}, 1);
  ASSERT_EQ(eager.exit_code, 0) << eager.err;
  EXPECT_EQ(eager.json["baseline"], "eager");
  CliRun compiled = RunKernelpro(
      {"suite", "report", (root_ / "a").string(), "--json", "--baseline", "compile"}, 1);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_EQ(compiled.json["baseline"], "torch.compile");
  const Json& problems = compiled.json["problems"];
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NEAR(problems[0]["speedup"].get<double>(), 2.0, 1e-9);  // 4x over eager / 2
  EXPECT_NEAR(problems[0]["other_speedup"].get<double>(), 4.0, 1e-9);
  EXPECT_NEAR(problems[1]["speedup"].get<double>(), 0.5, 1e-9);  // as fast as eager: slower
  EXPECT_NEAR(compiled.json["overall"]["fast_p"]["1.0"].get<double>(), 1.0 / 3, 1e-9);
  bool labelled = false;
  for (const Json& line : compiled.json["measurement"]) {
    labelled |= line.get<std::string>().find("baseline torch.compile") != std::string::npos;
  }
  EXPECT_TRUE(labelled) << compiled.json["measurement"].dump();

  // Without torch.compile times, correct problems cannot be scored against it, and it says so.
  WriteSuite(root_ / "b", {{"p", 4.0}}, root_ / "problems");
  CliRun missing = RunKernelpro(
      {"suite", "report", (root_ / "b").string(), "--json", "--baseline", "compile"}, 1);
  ASSERT_EQ(missing.exit_code, 0) << missing.err;
  EXPECT_EQ(missing.json["problems"][0]["status"], "no_baseline");
  EXPECT_NE(missing.json["measurement"].dump().find("no torch.compile time"), std::string::npos);
}

TEST_F(SuiteCommandTest, UsageErrorsAreOneLineAndExitTwo) {
  MakeCpuSuite();
  fs::create_directories(root_ / "empty");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"suite", "eval", "--problems", (root_ / "nope").string(), "--candidates",
        (root_ / "cands").string(), "--dir", (root_ / "s").string()},
       "not a folder"},
      {{"suite", "eval", "--problems", (root_ / "problems").string(), "--candidates",
        (root_ / "empty").string(), "--dir", (root_ / "s").string()},
       "no candidate in"},
      {{"suite", "status", (root_ / "none").string()}, "holds no suite"},
      {{"suite", "report", (root_ / "none").string()}, "holds no suite"},
      {{"suite", "optimize", "--problems", (root_ / "problems").string(), "--dir",
        (root_ / "s").string(), "--llm", "replay:" + (root_ / "missing-{problem}.jsonl").string()},
       "1_tiny_swish"},
      {{"suite", "run", (root_ / "none").string(), "--shard", "2", "--shards", "2"},
       "--shard 2 is not below --shards 2"},
  };
  for (const Case& c : cases) {
    CliRun r = RunKernelpro(c.args, 1);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace cli_suite_command_test
}  // namespace kernelpro::cli
