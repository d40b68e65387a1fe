// `kernelpro optimize` and `kernelpro resume` as a user runs them: the whole loop on CPU with the
// real worker and a replayed model, and runs killed with SIGKILL at chosen instants, then resumed.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/cli_testing.h"
#include "store/run_lock.h"
#include "store/run_store.h"

namespace kernelpro::cli {
namespace cli_optimize_command_test {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::RunKernelpro;
using testing::RunKernelproWithHooks;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kProblem = kRoot + "/tests/problems/tiny_swish.py";
const std::string kCassette = kRoot + "/tests/fixtures/cassettes/optimize_cpu_tiny_swish.jsonl";
// Builds, torch's precompiled header and references are cached in the one cache every test of
// this build tree shares, so only the first test to need a build compiles it.
const std::string kCache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// COUNT(*) of a query on a run's database.
long long Count(const fs::path& run_dir, const std::string& sql) {
  sqlite3* db = nullptr;
  long long n = -1;
  if (sqlite3_open_v2((run_dir / "run.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return n;
}

// The first column of the first row of a query on a run's database, as text ("" when none).
std::string Text(const fs::path& run_dir, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string text;
  if (sqlite3_open_v2((run_dir / "run.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return text;
}

// Runs kernelpro and kills it (SIGKILL, its whole process group) after `seconds`, wherever it is.
bool RunKernelproKilledAfter(const std::vector<std::string>& args, int seconds) {
  ProcessOptions p;
  p.argv = {KERNELPRO_BINARY};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.limits.wall_timeout = std::chrono::seconds(seconds);
  p.capture_bytes = 1 << 20;
  auto r = RunProcess(p);
  return r.ok() && r->timed_out;
}

class OptimizeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kp_optimize_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    profile_ = (dir_ / "llm.toml").string();
    // The cassette's requests are abbreviated: it is served in order.
    std::ofstream(profile_) << "[profiles.default]\nprovider = \"replay\"\nmodel = \"" << kCassette
                            << "\"\nreplay_mode = \"sequential\"\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> OptimizeArgs(const fs::path& run_dir) const {
    return {"optimize",
            "--device",
            "cpu",
            "--problem",
            kProblem,
            "--llm-config",
            profile_,
            "--iterations",
            "3",
            "--candidates",
            "2",
            "--no-memory",
            "--run-dir",
            run_dir.string(),
            "--cache-dir",
            kCache,
            "--trials",
            "2",
            "--extra-trials",
            "1",
            "--timing-trials",
            "20",
            "--timing-rounds",
            "1",
            "--time-budget",
            "2",
            "--python",
            "/usr/bin/python3"};
  }

  // A run that stopped (SIGKILL) right after its first LLM exchange was stored: run.db holds the
  // run and its options, before any candidate was built. Seconds, not minutes.
  void StartRunAndStopIt(std::vector<std::string> args) {
    CliRun first =
        RunKernelproWithHooks(args, 5, {{"KERNELPRO_TEST_KILL_AFTER_STEP", "exchange@1"}});
    ASSERT_NE(first.exit_code, 0) << first.out << first.err;
  }

  // What every complete run of the cassette holds, however often it was interrupted.
  void ExpectCompleteRun(const fs::path& run) {
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM runs"), 1);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM runs WHERE status = 'finished'"), 1);
    // Each iteration recorded exactly once, with its one selection and generation.
    for (const char* step : {"select", "generate", "record"}) {
      EXPECT_EQ(Count(run, std::string("SELECT COUNT(*) FROM steps WHERE step = '") + step +
                               "' AND state = 'done'"),
                3)
          << step;
      EXPECT_EQ(Count(run, std::string("SELECT COUNT(DISTINCT iteration) FROM steps WHERE step "
                                       "= '") +
                               step + "'"),
                3)
          << step;
    }
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM steps WHERE state != 'done'"), 0);
    // Six distinct candidates, each evaluated once; ROOT and six nodes; three paid exchanges.
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM candidates"), 6);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM evaluations"), 6);
    EXPECT_EQ(Count(run, "SELECT COUNT(DISTINCT candidate_id) FROM evaluations"), 6);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM nodes"), 7);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM llm_exchanges"), 3);
    EXPECT_EQ(Count(run, "SELECT COUNT(DISTINCT iteration) FROM llm_exchanges"), 3);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM llm_exchanges WHERE purpose = 'programmer'"), 3);
    // The modes the cassette drives MCTS through: initial, then the repair of the incorrect seed.
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM nodes WHERE iteration = 1 AND mode = 'initial'"), 2);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM nodes WHERE iteration = 2 AND mode = 'debug'"), 2);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM nodes WHERE status = 'incorrect'"), 1);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM nodes WHERE status = 'compile_error'"), 1);
    EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM nodes WHERE status = 'correct'"), 4);
    for (int id = 1; id <= 6; ++id) {
      char name[32];
      std::snprintf(name, sizeof name, "candidates/%04d.py", id);
      EXPECT_TRUE(fs::exists(run / name)) << name;
    }
    // best.py exactly when a kernel was shown faster than the reference (search/best_rule.h); on
    // a loaded 2-core machine the one faster kernel of the cassette may time too noisily to be.
    EXPECT_EQ(fs::exists(run / "best.py"),
              ReadFile(run / "report.md").find("Best kernel: **n") != std::string::npos);
    EXPECT_TRUE(fs::exists(run / "report.md"));
    EXPECT_TRUE(fs::exists(run / "report.html"));
  }

  fs::path dir_;
  std::string profile_;
};

TEST_F(OptimizeCommandTest, FindsACorrectKernelOnCpuEndToEnd) {
  const fs::path run = dir_ / "run";
  CliRun r = RunKernelpro(OptimizeArgs(run), 20);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  // One plain progress line per iteration (stdout is not a terminal here).
  EXPECT_NE(r.out.find("iteration 1/3  initial from ROOT: incorrect, compile_error"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("iteration 2/3  debug from n1: correct"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("iteration 3/3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopped: 3 iterations done"), std::string::npos) << r.out;
  ExpectCompleteRun(run);

  if (!fs::exists(run / "best.py")) {
    // Its one faster kernel timed too noisily here to be shown faster: the run says so.
    EXPECT_NE(r.out.find("best: the reference; no kernel was shown faster than the reference"),
              std::string::npos)
        << r.out;
    GTEST_SKIP() << "no kernel was shown faster than the reference on this machine now: " << r.out;
  }
  // The best kernel stands alone, with where and how it was measured.
  const std::string best = ReadFile(run / "best.py");
  EXPECT_NE(best.find("# device:    cpu"), std::string::npos) << best;
  EXPECT_NE(best.find("# toolchain: torch "), std::string::npos) << best;
  EXPECT_TRUE(std::regex_search(best, std::regex(R"(# speedup:   [0-9.]+x over the reference, 95% )"
                                                 R"(interval \[[0-9.]+, [0-9.]+\])")))
      << best;
  EXPECT_NE(best.find("class ModelNew"), std::string::npos);
  // ... and it is a kernel the harness accepts on its own.
  CliRun check = RunKernelpro(
      {"eval", "--device", "cpu", "--problem", kProblem, "--candidate", (run / "best.py").string(),
       "--cache-dir", kCache, "--trials", "2", "--timing-trials", "10", "--timing-rounds", "1",
       "--python", "/usr/bin/python3"},
      10);
  EXPECT_NE(check.out.find("status      correct"), std::string::npos) << check.out << check.err;

  const std::string report = ReadFile(run / "report.md");
  EXPECT_NE(report.find("## Result"), std::string::npos) << report;
  EXPECT_NE(report.find("Best kernel: **n"), std::string::npos) << report;
  EXPECT_NE(report.find("### Best lineage"), std::string::npos) << report;
  EXPECT_NE(report.find("| 2 | debug | n1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("## Search tree"), std::string::npos) << report;
  EXPECT_NE(report.find("- **n3** it 2 · debug · correct"), std::string::npos) << report;
  EXPECT_NE(report.find("profiling: skipped on device cpu"), std::string::npos) << report;

  // The same report as a page: the best kernel's speedup with its interval, as the CLI printed it.
  EXPECT_NE(r.out.find("report: " + (run / "report.md").string() +
                       " (HTML: " + (run / "report.html").string() + ")"),
            std::string::npos)
      << r.out;
  std::smatch best_line;
  ASSERT_TRUE(std::regex_search(r.out, best_line,
                                std::regex(R"(best: (n[0-9]+) ([0-9.]+x) (\[[0-9.]+, [0-9.]+\]))")))
      << r.out;
  const std::string html = ReadFile(run / "report.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html;
  EXPECT_NE(html.find("<strong>" + best_line[2].str() +
                      "</strong> over the reference, 95% "
                      "interval " +
                      best_line[3].str()),
            std::string::npos)
      << best_line[0] << "\n"
      << html;
  EXPECT_NE(html.find("<li id=\"" + best_line[1].str() + "\">"), std::string::npos) << html;
  EXPECT_NE(html.find("profiling: skipped on device cpu"), std::string::npos) << html;

  // A finished run resumed with no more budget does nothing and changes nothing.
  CliRun again = RunKernelpro({"resume", run.string()}, 10);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  ExpectCompleteRun(run);

  // resume takes the run's own --device, --search and --problem, and refuses others with why.
  CliRun same = RunKernelpro(
      {"resume", run.string(), "--device", "cpu", "--search", "mcts", "--problem", kProblem}, 10);
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  CliRun cuda = RunKernelpro({"resume", run.string(), "--device", "cuda"}, 1);
  EXPECT_EQ(cuda.exit_code, 2);
  EXPECT_EQ(cuda.err,
            "kernelpro resume: --device cuda: this run's candidates were written for cpu "
            "(C++ CPU extensions), which do not build on cuda; resume it on cpu, or "
            "start a new run with optimize --device cuda\n");
  CliRun greedy = RunKernelpro({"resume", run.string(), "--search", "greedy"}, 1);
  EXPECT_EQ(greedy.exit_code, 2);
  EXPECT_NE(greedy.err.find("--search greedy: this run's tree was built by mcts"),
            std::string::npos)
      << greedy.err;
  CliRun other =
      RunKernelpro({"resume", run.string(), "--problem", kRoot + "/tests/problems/no_model.py"}, 1);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("a run keeps its problem"), std::string::npos) << other.err;

  // resume takes the machine's own --python and --gpus (a run continued elsewhere): used, so a
  // bad one is refused before the run is touched.
  const std::string no_python = (dir_ / "no-python").string();
  CliRun bad_python =
      RunKernelpro({"resume", run.string(), "--iterations", "5", "--python", no_python}, 5);
  EXPECT_EQ(bad_python.exit_code, 2) << bad_python.out << bad_python.err;
  EXPECT_NE(bad_python.err.find(no_python + " cannot import torch"), std::string::npos)
      << bad_python.err;
  CliRun bad_gpus = RunKernelpro({"resume", run.string(), "--gpus", "x"}, 1);
  EXPECT_EQ(bad_gpus.exit_code, 2);
  EXPECT_EQ(bad_gpus.err,
            "kernelpro resume: --gpus: 'x' is not a GPU ordinal (digits only, e.g. --gpus 0,1); to "
            "name the GPU model the prompts target, use --gpu\n");
  ExpectCompleteRun(run);

  // More iterations than the cassette holds: iteration 4's call finds it spent, and the run stops
  // at once with the cassette's message instead of failing every iteration left (exit 0: a
  // correct kernel was found).
  CliRun more = RunKernelpro(
      {"resume", run.string(), "--iterations", "5", "--python", "/usr/bin/python3", "--gpus", "0"},
      20);
  EXPECT_EQ(more.exit_code, 0) << more.out << more.err;
  EXPECT_NE(more.out.find("stopped: the LLM call of iteration 4 failed and asking again cannot "
                          "help: not in the cassette: cassette " +
                          kCassette + ": exhausted: all 3 recordings of stream"),
            std::string::npos)
      << more.out;
  EXPECT_NE(more.out.find("(fix the cause, then continue with: kernelpro resume " + run.string()),
            std::string::npos)
      << more.out;
  EXPECT_EQ(more.out.find("iteration 4/5"), std::string::npos) << more.out;
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM nodes"), 7);  // no node for the failed call
  EXPECT_EQ(Count(run,
                  "SELECT COUNT(*) FROM steps WHERE iteration = 4 AND step = 'generate' AND "
                  "state = 'done'"),
            0);  // a resume with a longer cassette redoes it
  EXPECT_NE(ReadFile(run / "report.md").find("exhausted: all 3 recordings"), std::string::npos);
}

// --energy measure: after the search, NVML (here the fake library, reading the CPU's work)
// measures the reference and the fastest kernels; the CLI and both reports show it, and `kernelpro
// report` renders it again from the store. Without a library on cpu, a note says why not.
TEST_F(OptimizeCommandTest, EnergyMeasureEndsWithAnNvmlMeasurementOfTheFastestKernels) {
  const fs::path run = dir_ / "run";
  std::vector<std::string> args = OptimizeArgs(run);
  for (const char* extra : {"--energy", "measure", "--energy-kernels", "2", "--energy-windows", "3",
                            "--energy-window-s", "0.2", "--nvml-library", KERNELPRO_FAKE_NVML}) {
    args.push_back(extra);
  }
  CliRun r = RunKernelpro(args, 20);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch line;
  ASSERT_TRUE(std::regex_search(
      r.out, line,
      std::regex(R"(energy: reference [0-9.e+-]+ mJ per call; (n[0-9]+) [0-9.e+-]+ mJ \[[^\]]+\], )"
                 R"([0-9.]+x \[[0-9.]+, [0-9.]+\] less; (n[0-9]+) .* \(NVML\)\n)")))
      << r.out << r.err;
  EXPECT_NE(line[1], line[2]);
  EXPECT_NE(r.out.find("energy method: NVML total energy counter, 3 windows of 0.2 s, idle "),
            std::string::npos)
      << r.out;
  const std::string report = ReadFile(run / "report.md");
  EXPECT_NE(report.find("### Measured with NVML"), std::string::npos) << report;
  EXPECT_NE(report.find("| reference | - | "), std::string::npos) << report;
  EXPECT_NE(ReadFile(run / "report.html").find("<h3>Measured with NVML</h3>"), std::string::npos);
  EXPECT_EQ(Count(run,
                  "SELECT COUNT(*) FROM steps WHERE iteration = 0 AND step = 'energy' AND "
                  "state = 'done' AND key = '" +
                      line[1].str() + "," + line[2].str() + "'"),
            1);
  CliRun again = RunKernelpro({"report", run.string()}, 2);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(ReadFile(run / "report.md").find("### Measured with NVML"), std::string::npos);

  // No NVML library on a cpu run: the search is the same, and the run says why nothing was
  // measured.
  const fs::path plain = dir_ / "plain";
  args = OptimizeArgs(plain);
  args.insert(args.end(), {"--energy", "measure"});
  CliRun none = RunKernelpro(args, 20, {}, {"KERNELPRO_NVML_LIBRARY"});
  ASSERT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_NE(none.err.find("energy (NVML): not measured: --device cpu runs no GPU for NVML to "
                          "measure"),
            std::string::npos)
      << none.err;
  EXPECT_EQ(none.out.find("energy:"), std::string::npos) << none.out;
}

TEST_F(OptimizeCommandTest, AKilledRunResumesWithNothingLostAndNothingDoneTwice) {
  const fs::path run = dir_ / "run";
  // Killed right after: iteration 1's generation was journaled; the first evaluation of
  // iteration 2 was journaled (its sibling's was not); iteration 3's reply was stored but its
  // generation was not journaled (the reply must be reused, not bought again); iteration 3 was
  // recorded (only the end of the run is left).
  const std::vector<std::string> kills = {"generate@1", "evaluate@2", "exchange@3", "record@3"};
  CliRun first = RunKernelproWithHooks(OptimizeArgs(run), 20,
                                       {{"KERNELPRO_TEST_KILL_AFTER_STEP", kills.front()}});
  ASSERT_NE(first.exit_code, 0) << first.out << first.err;
  ASSERT_TRUE(fs::exists(run / "run.db"));
  for (size_t i = 1; i < kills.size(); ++i) {
    CliRun killed = RunKernelproWithHooks({"resume", run.string()}, 20,
                                          {{"KERNELPRO_TEST_KILL_AFTER_STEP", kills[i]}});
    ASSERT_NE(killed.exit_code, 0) << kills[i] << "\n" << killed.out << killed.err;
    ASSERT_EQ(killed.out.find("stopped:"), std::string::npos) << kills[i] << "\n" << killed.out;
  }
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM runs WHERE status = 'running'"), 1);
  // The last kill came after iteration 3's record: everything but the ending is there.
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM steps WHERE step = 'record'"), 3);

  CliRun done = RunKernelpro({"resume", run.string()}, 20, {}, {"KERNELPRO_TEST_KILL_AFTER_STEP"});
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.out.find("stopped: 3 iterations done"), std::string::npos) << done.out;
  ExpectCompleteRun(run);
  // Iteration 3's generation ran twice (killed once) but asked the model once.
  EXPECT_EQ(Count(run, "SELECT attempts FROM steps WHERE iteration = 3 AND step = 'generate'"), 2);
  // The evaluation killed mid-iteration was redone only for the candidate that was not journaled.
  EXPECT_EQ(Count(run, "SELECT MAX(attempts) FROM steps WHERE step = 'evaluate'"), 2);
}

TEST_F(OptimizeCommandTest, ARunKilledWhereverItIsResumesToTheSameEnd) {
  // Killed after a few seconds: in a build, a check, a timing or a store write, whichever is
  // running then; twice, at different instants.
  const fs::path run = dir_ / "run";
  ASSERT_TRUE(RunKernelproKilledAfter(OptimizeArgs(run), 4));
  ASSERT_TRUE(fs::exists(run / "run.db"));
  RunKernelproKilledAfter({"resume", run.string()}, 9);
  CliRun done = RunKernelpro({"resume", run.string()}, 20);
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  ExpectCompleteRun(run);
}

TEST_F(OptimizeCommandTest, ASecondProcessOnARunDirectoryIsRefusedWithTheHoldersPid) {
  const fs::path run = dir_ / "busy";
  // Another process works on the run: here, this test holds its lock.
  auto held = store::RunDirectoryLock::Acquire(run.string(), "optimize");
  ASSERT_TRUE(held.ok()) << held.status().message();
  const std::string holder = "kernelpro optimize (PID " + std::to_string(getpid());
  CliRun resume = RunKernelpro({"resume", run.string()});
  EXPECT_EQ(resume.exit_code, 2);
  EXPECT_NE(resume.err.find(holder), std::string::npos) << resume.err;
  CliRun optimize = RunKernelpro(OptimizeArgs(run));
  EXPECT_EQ(optimize.exit_code, 2);
  EXPECT_NE(optimize.err.find(holder), std::string::npos) << optimize.err;
  EXPECT_FALSE(fs::exists(run / store::kRunStoreFileName));
}

TEST_F(OptimizeCommandTest, ARunStoppedBySigtermKillsItsWorkersAndResumesToTheSameEnd) {
  // SIGTERM to kernelpro alone (not its process group), as `kill PID` or a scheduler sends it.
  const fs::path run = dir_ / "run";
  std::string command;
  for (const std::string& a : OptimizeArgs(run)) command += " '" + a + "'";
  ProcessOptions p;
  p.argv = {"/bin/sh", "-c",
            std::string("'") + KERNELPRO_BINARY + "'" + command +
                " > /dev/null 2> err.txt & pid=$!; sleep 6; kill -TERM $pid; wait $pid; "
                "echo exit=$?; cat err.txt"};
  p.working_dir = dir_.string();
  p.limits.wall_timeout = std::chrono::minutes(5);
  auto stopped = RunProcess(p);
  ASSERT_TRUE(stopped.ok());
  EXPECT_NE(stopped->stdout_text.find("exit=143"), std::string::npos) << stopped->stdout_text;
  EXPECT_NE(stopped->stdout_text.find("stopped by SIGTERM"), std::string::npos)
      << stopped->stdout_text;
  ASSERT_TRUE(fs::exists(run / "run.db"));
  CliRun done = RunKernelpro({"resume", run.string()}, 20);
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  ExpectCompleteRun(run);
}

TEST_F(OptimizeCommandTest, BadInputExitsWithTwo) {
  const fs::path run = dir_ / "run";
  // Resume of a directory that holds no run.
  fs::create_directories(run);
  CliRun none = RunKernelpro({"resume", run.string()});
  EXPECT_EQ(none.exit_code, 2) << none.out << none.err;
  EXPECT_EQ(none.err, "kernelpro resume: " + run.string() + " holds no run (no run.db); start a " +
                          "run there with: kernelpro optimize --run-dir " + run.string() +
                          " ...\n");
  // Reactive tools need tool feedback.
  std::vector<std::string> args = OptimizeArgs(dir_ / "other");
  args.insert(args.end(), {"--feedback", "raw", "--tool-mode", "reactive"});
  CliRun reactive = RunKernelpro(args);
  EXPECT_EQ(reactive.exit_code, 2) << reactive.err;
  EXPECT_NE(reactive.err.find("--tool-mode reactive needs --feedback tools"), std::string::npos);
  // A run store that holds no run (a start that stopped before it began): resume says what to do,
  // and optimize starts afresh there instead of calling it "a run".
  ASSERT_TRUE(store::RunStore::Open(run.string()).ok());
  CliRun half = RunKernelpro({"resume", run.string()});
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_NE(half.err.find(" holds no run: a start stopped before it began; start a run there "
                          "with: kernelpro optimize --run-dir "),
            std::string::npos)
      << half.err;
  std::vector<std::string> no_model = OptimizeArgs(run);
  no_model[4] = kRoot + "/tests/problems/no_model.py";
  CliRun afresh = RunKernelpro(no_model);
  EXPECT_EQ(afresh.exit_code, 2) << afresh.err;
  EXPECT_NE(afresh.err.find("holds a start that stopped before its first LLM exchange; starting "
                            "afresh"),
            std::string::npos)
      << afresh.err;
  EXPECT_NE(afresh.err.find("defines no class Model"), std::string::npos) << afresh.err;
  EXPECT_FALSE(fs::exists(run / "run.db")) << "the failed start takes back the store it replaced";
  // No model chosen.
  CliRun no_llm = RunKernelpro({"optimize", "--device", "cpu", "--problem", kProblem, "--run-dir",
                                (dir_ / "third").string()},
                               5, {}, {"KERNELPRO_LLM", "KERNELPRO_LLM_CONFIG"});
  EXPECT_EQ(no_llm.exit_code, 2) << no_llm.err;
  // No problem, and no --demo either.
  CliRun no_problem = RunKernelpro({"optimize", "--device", "cpu", "--llm", "replay:" + kCassette});
  EXPECT_EQ(no_problem.exit_code, 2) << no_problem.err;
  EXPECT_NE(no_problem.err.find("--problem is required (or try --demo)"), std::string::npos);
  // The demo brings its own problem and model.
  CliRun demo_llm = RunKernelpro({"optimize", "--demo", "--llm", "replay:" + kCassette});
  EXPECT_EQ(demo_llm.exit_code, 2) << demo_llm.err;
  EXPECT_NE(demo_llm.err.find("leave out --llm"), std::string::npos) << demo_llm.err;
  CliRun demo_problem = RunKernelpro({"optimize", "--demo", "--problem", kProblem}, 5, {},
                                     {"KERNELPRO_LLM", "KERNELPRO_LLM_CONFIG"});
  EXPECT_EQ(demo_problem.exit_code, 2) << demo_problem.err;
  EXPECT_NE(demo_problem.err.find("leave out --problem"), std::string::npos) << demo_problem.err;
  // The demo's cassette holds requests without seeds: a seeded demo could only miss.
  CliRun demo_seed = RunKernelpro({"optimize", "--demo", "--seed", "7"}, 5, {},
                                  {"KERNELPRO_LLM", "KERNELPRO_LLM_CONFIG"});
  EXPECT_EQ(demo_seed.exit_code, 2) << demo_seed.err;
  EXPECT_EQ(demo_seed.err,
            "kernelpro optimize: --demo replays a cassette recorded without seeds; leave out "
            "--seed\n");
  // A bad --gpus list stops before the run directory is made (a retry is not "already a run").
  std::vector<std::string> gpus = OptimizeArgs(dir_ / "fourth");
  gpus.insert(gpus.end(), {"--gpus", "0", "--gpus", "0"});
  CliRun twice = RunKernelpro(gpus);
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
  EXPECT_NE(twice.err.find("--gpus: GPU 0 is listed twice"), std::string::npos) << twice.err;
  EXPECT_FALSE(fs::exists(dir_ / "fourth" / "run.db"));
}

// What a run needs is checked before its directory is made: one line naming the fix, exit 2,
// nothing created.
TEST_F(OptimizeCommandTest, PreconditionsAreCheckedBeforeTheRunDirectoryIsMade) {
  const fs::path run = dir_ / "unmade" / "run";
  // No API key for the provider.
  CliRun no_key = RunKernelpro({"optimize", "--device", "cpu", "--problem", kProblem, "--llm",
                                "anthropic:claude-x", "--run-dir", run.string()},
                               1, {}, {"ANTHROPIC_API_KEY"});
  EXPECT_EQ(no_key.exit_code, 2);
  EXPECT_EQ(no_key.err, "kernelpro optimize: anthropic: set ANTHROPIC_API_KEY\n");
  // A cassette that is not there.
  CliRun no_cassette =
      RunKernelpro({"optimize", "--device", "cpu", "--problem", kProblem, "--llm",
                    "replay:" + (dir_ / "missing.jsonl").string(), "--run-dir", run.string()},
                   1);
  EXPECT_EQ(no_cassette.exit_code, 2) << no_cassette.err;
  EXPECT_NE(no_cassette.err.find("missing.jsonl"), std::string::npos) << no_cassette.err;
  // A server that is not running (a port nothing listens on: refused at once).
  CliRun down = RunKernelpro({"optimize", "--device", "cpu", "--problem", kProblem, "--llm",
                              "openai:m@http://127.0.0.1:9/v1", "--run-dir", run.string()},
                             1);
  EXPECT_EQ(down.exit_code, 2);
  EXPECT_TRUE(
      down.err.starts_with("kernelpro optimize: cannot reach the model's server at "
                           "http://127.0.0.1:9/v1/models: "))
      << down.err;
  // No GPU for --device cuda (--gpus 99: none on any machine). The demo itself is the case a
  // newcomer hits first.
  CliRun no_gpu = RunKernelpro({"optimize", "--demo", "--gpus", "99", "--run-dir", run.string(),
                                "--python", "/usr/bin/python3"},
                               2, {}, {"KERNELPRO_LLM", "KERNELPRO_LLM_CONFIG"});
  EXPECT_EQ(no_gpu.exit_code, 2);
  EXPECT_EQ(no_gpu.err,
            "kernelpro optimize: no CUDA GPU found (--gpus 99): use --device cpu, or "
            "run on a machine with a GPU\n");
  EXPECT_EQ(no_gpu.out, "");
  for (const CliRun* r : {&no_key, &no_cassette, &down, &no_gpu}) {
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "unmade"));
}

// A run that cannot start leaves nothing behind, so the next optimize is not told the directory
// "already holds a run".
TEST_F(OptimizeCommandTest, ARunThatCannotStartLeavesNoHalfMadeRunDirectory) {
  const fs::path fresh = dir_ / "fresh" / "run";
  std::vector<std::string> args = OptimizeArgs(fresh);
  // The key may not go to that URL (key_policy.h): the backend is refused after the run store was
  // opened.
  const std::vector<std::string> remote = {"--llm", "openai:m@http://192.0.2.10:8000/v1"};
  std::vector<std::string> refused = args;
  refused.insert(refused.end(), remote.begin(), remote.end());
  CliRun first = RunKernelpro(refused, 5, {{"OPENAI_API_KEY", "sk-test"}});
  EXPECT_EQ(first.exit_code, 2) << first.err;
  EXPECT_NE(first.err.find("refusing to send OPENAI_API_KEY"), std::string::npos) << first.err;
  EXPECT_FALSE(fs::exists(dir_ / "fresh")) << "every directory it made is taken back";
  // A directory that existed keeps what it held and loses only what the failed run added.
  const fs::path existing = dir_ / "existing";
  fs::create_directories(existing);
  std::ofstream(existing / "notes.txt") << "mine";
  refused = OptimizeArgs(existing);
  refused.insert(refused.end(), remote.begin(), remote.end());
  CliRun second = RunKernelpro(refused, 5, {{"OPENAI_API_KEY", "sk-test"}});
  EXPECT_EQ(second.exit_code, 2) << second.err;
  ASSERT_TRUE(fs::exists(existing / "notes.txt"));
  EXPECT_FALSE(fs::exists(existing / "run.db"));
  EXPECT_EQ(std::distance(fs::directory_iterator(existing), fs::directory_iterator()), 1);
  // A run that starts but stops before its first exchange (the problem has no Model) has nothing
  // worth resuming: it says so, and takes its directory back.
  std::vector<std::string> broken = OptimizeArgs(fresh);
  broken[4] = kRoot + "/tests/problems/no_model.py";
  CliRun stopped = RunKernelpro(broken, 5);
  EXPECT_EQ(stopped.exit_code, 2) << stopped.err;
  EXPECT_NE(stopped.err.find("defines no class Model"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("(nothing was recorded: "), std::string::npos) << stopped.err;
  EXPECT_EQ(stopped.err.find("kernelpro resume"), std::string::npos) << stopped.err;
  EXPECT_FALSE(fs::exists(dir_ / "fresh"));
  // A run directory that cannot be a directory is a clear error (not an abort).
  CliRun under_file = RunKernelpro(OptimizeArgs("/etc/hostname/run"));
  EXPECT_EQ(under_file.exit_code, 2) << under_file.err;
  EXPECT_NE(under_file.err.find("kernelpro optimize: cannot create the run directory "
                                "/etc/hostname/run: Not a directory"),
            std::string::npos)
      << under_file.err;
  // A --work-dir that cannot be made: the same, and the run directory is taken back too.
  std::vector<std::string> work = OptimizeArgs(fresh);
  work.insert(work.end(), {"--work-dir", "/proc/kernelpro-work"});
  CliRun proc = RunKernelpro(work);
  EXPECT_EQ(proc.exit_code, 2) << proc.err;
  EXPECT_NE(proc.err.find("cannot create --work-dir /proc/kernelpro-work: "), std::string::npos)
      << proc.err;
  EXPECT_FALSE(fs::exists(dir_ / "fresh"));
}

TEST_F(OptimizeCommandTest, NumbersOutOfRangeAreUsageErrors) {
  for (const auto& [option, value] :
       std::vector<std::pair<std::string, std::string>>{{"--atol", "nan"},
                                                        {"--rtol", "-1"},
                                                        {"--time-budget", "inf"},
                                                        {"--max-cost", "nan"},
                                                        {"--time-limit", "0"},
                                                        {"--iterations", "0"},
                                                        {"--candidates", "17"},
                                                        {"--timeout", "1.5"}}) {
    std::vector<std::string> args = OptimizeArgs(dir_ / "never");
    args.insert(args.end(), {option, value});
    CliRun r = RunKernelpro(args, 1);
    EXPECT_EQ(r.exit_code, 2) << option << " " << value << ": " << r.err;
    EXPECT_NE(r.err.find(option + ": '" + value + "' is not accepted: give a "), std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "never"));
  CliRun resume = RunKernelpro({"resume", dir_.string(), "--max-cost", "-inf"}, 1);
  EXPECT_EQ(resume.exit_code, 2) << resume.err;
  EXPECT_NE(resume.err.find("--max-cost: '-inf' is not accepted: give a finite number >= 0"),
            std::string::npos)
      << resume.err;
}

// The user's tools (--tool-rules, --tool-plugin, --threshold, --no-energy) join the search as they
// join `advise`, and a resumed run analyses with the same ones.
TEST_F(OptimizeCommandTest, TheUsersToolsJoinTheRunAndItsResumption) {
  const fs::path rules = dir_ / "rules.toml";
  fs::copy_file(kRoot + "/examples/rules/memory_rules.toml", rules);
  // A bad rules file or threshold is a clear error before the run starts.
  const fs::path bad = dir_ / "bad.toml";
  std::ofstream(bad) << "[[tool]]\nname = 3\n";
  std::vector<std::string> args = OptimizeArgs(dir_ / "refused");
  args.insert(args.end(), {"--tool-rules", bad.string()});
  CliRun bad_rules = RunKernelpro(args, 1);
  EXPECT_EQ(bad_rules.exit_code, 2) << bad_rules.err;
  EXPECT_NE(bad_rules.err.find("kernelpro optimize: "), std::string::npos) << bad_rules.err;
  EXPECT_NE(bad_rules.err.find(bad.string()), std::string::npos) << bad_rules.err;
  args = OptimizeArgs(dir_ / "refused");
  args.insert(args.end(), {"--tool-rules", rules.string(), "--threshold", "l2_reuse.nope=1"});
  CliRun bad_threshold = RunKernelpro(args, 1);
  EXPECT_EQ(bad_threshold.exit_code, 2) << bad_threshold.err;
  EXPECT_NE(bad_threshold.err.find("tool 'l2_reuse' has no threshold 'nope' (it has: low_hit, "
                                   "min_mb)"),
            std::string::npos)
      << bad_threshold.err;
  EXPECT_FALSE(fs::exists(dir_ / "refused"));

  const fs::path run = dir_ / "run";
  args = OptimizeArgs(run);
  args.insert(args.end(), {"--tool-rules", rules.string(), "--threshold", "l2_reuse.low_hit=40",
                           "--no-energy"});
  StartRunAndStopIt(args);
  const Json config = Json::parse(Text(run, "SELECT config_json FROM runs"), nullptr, false);
  const Json tools = JsonGet<Json>(config, "tools", Json{});
  EXPECT_EQ(tools, (Json{{"plugins", Json::array()},
                         {"rule_files", {rules.string()}},
                         {"thresholds", {"l2_reuse.low_hit=40"}},
                         {"no_energy", true},
                         {"energy_proxy", "access-width"}}))
      << config.dump(2);
  // Resume loads them again: a rules file gone is an error naming it, before anything runs.
  fs::rename(rules, dir_ / "moved.toml");
  CliRun resumed =
      RunKernelpro({"resume", run.string()}, 5, {}, {"KERNELPRO_TEST_KILL_AFTER_STEP"});
  EXPECT_EQ(resumed.exit_code, 2) << resumed.err;
  EXPECT_NE(resumed.err.find("kernelpro resume: the run's tools: "), std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find(rules.string()), std::string::npos) << resumed.err;
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM llm_exchanges"), 1);
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM candidates"), 0);
}

// --max-cost counts priced exchanges: with a model that has no price (or a replayed one, which
// costs nothing) it would never stop the run, so it is refused at once, saying what to give.
TEST_F(OptimizeCommandTest, ACostLimitNeedsAModelWithAPrice) {
  const std::vector<std::string> openai = {"--llm", "openai:gpt-4o", "--max-cost", "1"};
  std::vector<std::string> args = OptimizeArgs(dir_ / "never");
  args.insert(args.end(), openai.begin(), openai.end());
  CliRun unpriced = RunKernelpro(args, 1, {}, {"OPENAI_API_KEY"});
  EXPECT_EQ(unpriced.exit_code, 2) << unpriced.err;
  EXPECT_NE(unpriced.err.find("kernelpro optimize: --max-cost: no price is known for "
                              "openai:gpt-4o, so every exchange would count as $0 and the limit "
                              "would never stop the run; give --llm-prices FILE"),
            std::string::npos)
      << unpriced.err;
  // A price table without the model.
  const fs::path prices = dir_ / "prices.toml";
  std::ofstream(prices) << "[models.\"claude-3-5-sonnet*\"]\ninput_per_mtok = 3\n"
                           "output_per_mtok = 15\n";
  args.insert(args.end(), {"--llm-prices", prices.string()});
  CliRun missing = RunKernelpro(args, 1, {}, {"OPENAI_API_KEY"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(
      missing.err.find("the price table " + prices.string() + " has no entry for openai:gpt-4o"),
      std::string::npos)
      << missing.err;
  // With a price the limit is accepted (the run then stops for want of a key, not of a price).
  std::ofstream(prices, std::ios::app) << "[models.\"gpt-4o\"]\ninput_per_mtok = 2.5\n"
                                          "output_per_mtok = 10\n";
  CliRun priced = RunKernelpro(args, 1, {}, {"OPENAI_API_KEY"});
  EXPECT_EQ(priced.exit_code, 2) << priced.err;
  EXPECT_EQ(priced.err.find("--max-cost"), std::string::npos) << priced.err;
  EXPECT_NE(priced.err.find("OPENAI_API_KEY"), std::string::npos) << priced.err;
  EXPECT_FALSE(fs::exists(dir_ / "never"));
  // A replay (the cassette here, or --demo) costs nothing.
  args = OptimizeArgs(dir_ / "never");
  args.insert(args.end(), {"--max-cost", "1"});
  CliRun replay = RunKernelpro(args, 1);
  EXPECT_EQ(replay.exit_code, 2) << replay.err;
  EXPECT_NE(replay.err.find("--max-cost: a replayed model costs nothing"), std::string::npos)
      << replay.err;
  CliRun demo = RunKernelpro({"optimize", "--demo", "--device", "cpu", "--max-cost", "1"}, 1, {},
                             {"KERNELPRO_LLM", "KERNELPRO_LLM_CONFIG"});
  EXPECT_EQ(demo.exit_code, 2) << demo.err;
  EXPECT_NE(demo.err.find("--max-cost: a replayed model costs nothing"), std::string::npos)
      << demo.err;
  EXPECT_FALSE(fs::exists(dir_ / "never"));
  // On resume, a limit given then is checked against the run's model.
  const fs::path run = dir_ / "run";
  StartRunAndStopIt(OptimizeArgs(run));
  CliRun resume = RunKernelpro({"resume", run.string(), "--max-cost", "1"}, 1, {},
                               {"KERNELPRO_TEST_KILL_AFTER_STEP"});
  EXPECT_EQ(resume.exit_code, 2) << resume.err;
  EXPECT_NE(resume.err.find("kernelpro resume: --max-cost: a replayed model costs nothing"),
            std::string::npos)
      << resume.err;
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM llm_exchanges"), 1);
}

// `kernelpro optimize --demo --device cpu`, as a new user without a GPU or an API key runs it
// (cut to two iterations and short timings): the project's CPU candidates replayed into the real
// loop, memory on, and a complete run directory at the end.
TEST_F(OptimizeCommandTest, TheCpuDemoRunsTheWholeLoopWithoutAKey) {
  const fs::path run = dir_ / "demo";
  CliRun demo = RunKernelpro({"optimize",        "--demo",
                              "--device",        "cpu",
                              "--iterations",    "2",
                              "--run-dir",       run.string(),
                              "--cache-dir",     kCache,
                              "--trials",        "2",
                              "--extra-trials",  "1",
                              "--timing-trials", "10",
                              "--timing-rounds", "1",
                              "--time-budget",   "2",
                              "--python",        "/usr/bin/python3"},
                             20, {}, {"KERNELPRO_LLM", "KERNELPRO_LLM_CONFIG"});
  ASSERT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  EXPECT_NE(demo.out.find("problems/swish/demo/cpu.jsonl"), std::string::npos) << demo.out;
  // The story of the cassette: two failed seeds, then two correct repairs of the incorrect one.
  EXPECT_NE(demo.out.find("iteration 1/2  initial from ROOT: incorrect, compile_error"),
            std::string::npos)
      << demo.out;
  EXPECT_NE(demo.out.find("iteration 2/2  debug from n1: correct"), std::string::npos) << demo.out;
  // The repairs are slower than the reference by design: the reference stays the answer, and the
  // closing line names the fastest correct kernel instead of calling it the best.
  EXPECT_NE(demo.out.find("| best the reference"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("best: the reference; no kernel was shown faster than the reference: "
                          "the fastest correct one, n"),
            std::string::npos)
      << demo.out;
  // On cpu it says what it did not do; a replay buys nothing, so its cost is $0, not unknown.
  EXPECT_NE(demo.out.find("every build, check and timing is real; on cpu nothing is profiled: "
                          "no ncu, no SASS, no roofline"),
            std::string::npos)
      << demo.out;
  EXPECT_EQ(demo.out.find("profile is real"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("| cost $0.0000"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("LLM: 4 exchanges, cost $0.0000"), std::string::npos) << demo.out;
  EXPECT_EQ(demo.out.find("unknown"), std::string::npos) << demo.out;
  EXPECT_NE(ReadFile(run / "report.md").find("- Not done on cpu: no profiling"), std::string::npos);
  // While it ran, stderr (a pipe here) told each step of each candidate as it happened.
  EXPECT_NE(demo.err.find("optimize: iteration 1/2: programmer: asking the model... done in "),
            std::string::npos)
      << demo.err;
  EXPECT_NE(demo.err.find("optimize: iteration 2/2: cand 1/"), std::string::npos) << demo.err;
  EXPECT_NE(demo.err.find(".py: timing... done in "), std::string::npos) << demo.err;
  for (const char* file :
       {"run.db", "report.md", "report.html", "memory.jsonl", "candidates/0001.py"}) {
    EXPECT_TRUE(fs::exists(run / file)) << file;
  }
  EXPECT_FALSE(fs::exists(run / "best.py")) << "no kernel is the answer: no best.py";
  EXPECT_NE(ReadFile(run / "candidates/0003.py").find("kp_demo_cpu_swish"), std::string::npos);
  // The memory extractor's notes were replayed too, tagged with their iterations.
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM llm_exchanges WHERE purpose = 'programmer'"), 2);
  EXPECT_EQ(Count(run, "SELECT COUNT(*) FROM llm_exchanges WHERE purpose = 'memory'"), 2);
  EXPECT_EQ(Count(run,
                  "SELECT COUNT(DISTINCT iteration) FROM llm_exchanges WHERE purpose = "
                  "'memory'"),
            2);
  EXPECT_NE(ReadFile(run / "memory.jsonl").find("returning the sigmoid alone"), std::string::npos);
}

}  // namespace cli_optimize_command_test
}  // namespace kernelpro::cli
