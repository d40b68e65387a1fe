// End-to-end tests of `kernelpro eval --device cpu`: the whole harness (scan, reference, build,
// check, compare, time) on C++ CPU extensions, with the candidates a user or an LLM could write —
// good ones, cheating ones and crashing ones. They assert what a user sees: the status, the
// message, and the presence of a speedup with its interval. Builds are cached in the build tree.
#include "eval/executor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/subprocess.h"
#include "eval/worker_client.h"

namespace kernelpro::eval {
namespace eval_executor_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

struct Eval {
  int exit_code = -1;
  std::vector<Json> results;  // one per candidate
  std::string stdout_text, stderr_text;
  const Json& operator[](std::size_t i) const { return results.at(i); }
};

Eval RunEval(std::vector<std::string> args, bool json = true) {
  ProcessOptions p;
  p.argv = {KERNELPRO_BINARY, "eval", "--device", "cpu", "--trials", "3", "--extra-trials", "1",
            "--timing-trials", "6", "--time-budget", "2", "--timeout", "120", "--cache-dir",
            std::string(KERNELPRO_BINARY_DIR) + "/test-cache",
            // The compiled swish the common candidates import from tests/candidates/, a folder
            // above their own: the sandbox shows only a candidate's own folder's Python files.
            "--sandbox-read", kRoot + "/tests/candidates/swish_ext.py",
            // torch's precompiled header, made once in the shared cache by the first build that
            // needs it: a build then takes half the time (most of this file's tests build).
            "--precompiled-headers"};
  if (json) p.argv.push_back("--json");
  for (auto& a : args) {
    bool relative_path = a.rfind("--", 0) != 0 && a.find('/') != std::string::npos && a[0] != '/';
    p.argv.push_back(relative_path ? kRoot + "/" + a : a);
  }
  p.limits.wall_timeout = std::chrono::minutes(20);
  p.capture_bytes = 1 << 20;
  Eval e;
  auto r = RunProcess(p);
  if (!r.ok()) return e;
  e.exit_code = r->exit_code;
  e.stdout_text = r->stdout_text;
  e.stderr_text = r->stderr_text;
  std::size_t start = 0;
  while (json && start < e.stdout_text.size()) {
    std::size_t end = e.stdout_text.find('\n', start);
    std::string line = e.stdout_text.substr(start, end - start);
    if (!line.empty()) e.results.push_back(Json::parse(line, nullptr, false));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return e;
}

std::string Status(const Json& j) { return JsonGet<std::string>(j, "status", "<none>"); }
std::string Message(const Json& j) { return JsonGet<std::string>(j, "message", ""); }

#define EXPECT_VERDICT(result, status, needle)                        \
  do {                                                                \
    EXPECT_EQ(Status(result), status) << (result).dump(1);            \
    EXPECT_NE(Message(result).find(needle), std::string::npos)        \
        << "message lacks '" << (needle) << "': " << Message(result); \
  } while (0)

const char* kTinySwish = "tests/problems/tiny_swish.py";
const char* kSmallLinear = "tests/problems/small_linear.py";

// "tests/candidates/faults/cpu/segfault.py" -> "cpu_segfault": readable parameterised test names.
std::string TestName(const std::string& path) {
  std::string stem = path.substr(path.rfind('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  std::string dir = path.substr(0, path.rfind('/'));
  dir = dir.substr(dir.rfind('/') + 1);
  std::string name = dir + "_" + stem;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// Progress while eval runs: piped stderr (as here) gets one whole line per step, each with how
// it ended and its time; --quiet leaves stderr empty.
TEST(EvalCpuTest, PipedStderrHasOneLinePerStepAndQuietHasNone) {
  Eval e =
      RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/good/cpu_tiny_swish.py"},
              /*json=*/false);
  ASSERT_EQ(e.exit_code, 0) << e.stderr_text;
  // Each step has one line that says how it ended and in what time. The reference and the build
  // run at once, so either may also have a line of its own for its start.
  std::vector<std::string> finished;
  std::istringstream err(e.stderr_text);
  for (std::string line; std::getline(err, line);) {
    EXPECT_EQ(line.rfind("eval: ", 0), 0u) << e.stderr_text;
    if (line.find("... ") != std::string::npos) finished.push_back(line);
  }
  ASSERT_EQ(finished.size(), 4u) << e.stderr_text;
  auto one_line = [&](const std::string& head) {
    int count = 0;
    for (const std::string& line : finished) {
      bool timed = line.size() > 2 && line.compare(line.size() - 2, 2, " s") == 0;
      if (line.rfind(head, 0) == 0 && timed) ++count;
    }
    return count == 1;
  };
  EXPECT_TRUE(one_line("eval: reference: computing... ")) << e.stderr_text;
  EXPECT_TRUE(one_line("eval: cand 1/1 cpu_tiny_swish.py: building... ")) << e.stderr_text;
  EXPECT_TRUE(one_line("eval: cand 1/1 cpu_tiny_swish.py: checking... done in ")) << e.stderr_text;
  EXPECT_TRUE(one_line("eval: cand 1/1 cpu_tiny_swish.py: timing... done in ")) << e.stderr_text;
  // The device steps come after both.
  EXPECT_NE(finished[2].find("checking"), std::string::npos) << e.stderr_text;
  EXPECT_NE(e.stdout_text.find("status      correct"), std::string::npos) << e.stdout_text;

  Eval quiet = RunEval({"--problem", kTinySwish, "--candidate",
                        "tests/candidates/good/cpu_tiny_swish.py", "--quiet"},
                       /*json=*/false);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.stderr_text;
  EXPECT_EQ(quiet.stderr_text, "");
  EXPECT_NE(quiet.stdout_text.find("status      correct"), std::string::npos);
}

TEST(EvalCpuTest, CorrectCandidateGetsTimesAndASpeedupInterval) {
  Eval e =
      RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/good/cpu_tiny_swish.py"});
  ASSERT_EQ(e.exit_code, 0) << e.stderr_text;
  ASSERT_EQ(e.results.size(), 1u) << e.stdout_text;
  const Json& r = e[0];
  EXPECT_EQ(Status(r), "correct") << r.dump(1);
  EXPECT_GT(r["reference_ms"].get<double>(), 0);
  EXPECT_GT(r["candidate_ms"].get<double>(), 0);
  double s = r["speedup"].get<double>();
  EXPECT_LE(r["speedup_interval"][0].get<double>(), s);
  EXPECT_GE(r["speedup_interval"][1].get<double>(), s);
  // Check trials, the signed/mixed-scale trial, the refilled buffer and a sample of the timed
  // calls, each checked on its own freshly scaled inputs.
  EXPECT_GE(r["correctness"].size(), 3u + 1u + 1u + 1u);
  int timed_rows = 0;
  for (const Json& row : r["correctness"]) {
    if (JsonGet<std::string>(row, "trial", "").starts_with("timed call ")) {
      ++timed_rows;
      EXPECT_TRUE(JsonGet<bool>(row, "passed", false)) << row.dump();
      EXPECT_NE(JsonGet<std::string>(row, "expected", "").find("scaled by seed"),
                std::string::npos);
    }
  }
  EXPECT_GE(timed_rows, 1) << r["correctness"].dump(1);
  ASSERT_FALSE(r["build"]["shared_objects"].empty());
  // --timing-trials 6: two interleaved rounds of three calls per side (a block gets at least 5
  // calls where the trials allow, and there are at least 2 rounds).
  EXPECT_EQ(r["reference_timing"]["block_medians_ms"].size(), 2u);
  EXPECT_EQ(r["candidate_timing"]["block_medians_ms"].size(), 2u);
  EXPECT_EQ(r["candidate_timing"]["count"].get<int>(), 6);
  EXPECT_EQ(JsonGet<std::string>(r, "timing_method", ""), "host perf_counter around the call");
}

// Shapes the benchmark never showed: tiny_swish's N = 4096 derives N = 2048 and N = 2049. A
// kernel written for the benchmark's size stays correct (timed, as before) but is seen to fail
// them; with --require-shape-generality it is incorrect, saying on which shape.
TEST(EvalCpuTest, AKernelThatHardCodesTheBenchmarkSizeIsSeenToFailOtherShapes) {
  const char* general = "tests/candidates/good/cpu_tiny_swish.py";
  const char* fixed = "tests/candidates/good/cpu_fixed_shape_swish.py";
  Eval e = RunEval({"--problem", kTinySwish, "--candidate", general, "--candidate", fixed});
  ASSERT_EQ(e.exit_code, 0) << e.stderr_text;
  ASSERT_EQ(e.results.size(), 2u) << e.stdout_text;
  for (const Json& r : e.results) {
    EXPECT_EQ(Status(r), "correct") << r.dump(1);
    EXPECT_GT(JsonGet<double>(r, "speedup", 0), 0) << r.dump(1);  // timed as before
    EXPECT_EQ(r["shapes"]["mode"], "derived");
    ASSERT_EQ(r["shapes"]["checked"].size(), 2u) << r["shapes"].dump(1);
    EXPECT_EQ(r["shapes"]["checked"][0]["label"], "N=2048");
    EXPECT_EQ(r["shapes"]["checked"][1]["inputs"], Json::parse(R"([{"shape": [2049],
                                                                    "dtype": "float32"}])"));
  }
  EXPECT_EQ(e[0]["shapes"]["all_correct"], true) << e[0]["shapes"].dump(1);
  EXPECT_EQ(e[1]["shapes"]["all_correct"], false);
  EXPECT_EQ(e[1]["shapes"]["checked"][0]["status"], "runtime_error");
  EXPECT_NE(JsonGet<std::string>(e[1]["shapes"]["checked"][0], "message", "")
                .find("invalid for input of size 2048"),
            std::string::npos)
      << e[1]["shapes"].dump(1);

  Eval required = RunEval({"--problem", kTinySwish, "--candidate", general, "--candidate", fixed,
                           "--require-shape-generality"},
                          /*json=*/false);
  ASSERT_EQ(required.exit_code, 1) << required.stderr_text;  // one candidate is not correct
  const std::string& out = required.stdout_text;
  EXPECT_NE(out.find("status      correct (all 3 shapes)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("status      incorrect\nmessage     not shape-general, as "
                     "--require-shape-generality requires: fails shape 2 of 3 (N=2048): "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("; every checked shape too (--require-shape-generality)\n"),
            std::string::npos)
      << out;  // the criterion names the requirement
  Eval lenient = RunEval({"--problem", kTinySwish, "--candidate", fixed}, /*json=*/false);
  EXPECT_NE(lenient.stdout_text.find("status      correct (fixed-shape: correct on the benchmark "
                                     "shape; fails shape 2 of 3 (N=2048): "),
            std::string::npos)
      << lenient.stdout_text;
}

TEST(EvalCpuTest, AStageOneAnalysisPlacesEachTimedKernelAgainstTheRoofline) {
  // The analysis a user saves with `kernelpro analyze --json` (here for an H200, from the CPU).
  ProcessOptions analyze;
  analyze.argv = {KERNELPRO_BINARY, "analyze",
                  "--problem",      kRoot + "/" + kTinySwish,
                  "--device",       "cpu",
                  "--gpu",          "H200",
                  "--no-ncu",       "--json",
                  "--cache-dir",    std::string(KERNELPRO_BINARY_DIR) + "/test-cache"};
  analyze.capture_bytes = 1 << 20;
  auto a = RunProcess(analyze);
  ASSERT_TRUE(a.ok() && a->exit_code == 0) << (a.ok() ? a->stderr_text : a.status().message());
  std::string path = std::string(KERNELPRO_BINARY_DIR) + "/tiny_swish.analysis.json";
  std::ofstream(path) << a->stdout_text;
  Eval e = RunEval({"--problem", kTinySwish, "--candidate",
                    "tests/candidates/good/cpu_tiny_swish.py", "--analysis", path});
  ASSERT_EQ(e.exit_code, 0) << e.stderr_text;
  ASSERT_EQ(e.results.size(), 1u);
  const Json& r = e[0];
  ASSERT_TRUE(r.contains("roofline")) << r.dump(1);
  EXPECT_GT(r["roofline"]["fraction_of_bound"].get<double>(), 0);
  EXPECT_NEAR(r["roofline"]["measured_time_s"].get<double>(),
              r["candidate_ms"].get<double>() * 1e-3, 1e-12);
  EXPECT_NE(r["roofline"]["summary"].get<std::string>().find("of the attainable bound"),
            std::string::npos);
  EXPECT_TRUE(r.contains("reference_roofline"));
  Eval bad =
      RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/good/cpu_tiny_swish.py",
               "--analysis", kRoot + "/README.md"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(EvalCpuTest, SecondEvaluationOfTheSameSourceReusesTheBuild) {
  Eval first =
      RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/good/cpu_tiny_swish.py"});
  Eval second =
      RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/good/cpu_tiny_swish.py"});
  ASSERT_EQ(second.results.size(), 1u);
  EXPECT_TRUE(second[0]["build"]["cached"].get<bool>()) << second[0].dump(1);
  EXPECT_EQ(first[0]["build"]["shared_objects"], second[0]["build"]["shared_objects"]);
}

TEST(EvalCpuTest, AFreshBuildUsesAPrecompiledTorchHeaderAndStillPasses) {
  // A source no evaluation has built: the build step runs, after the trusted pch step (cached
  // in the test cache after the first run), and its build notes say what it did.
  const std::string dir = std::string(KERNELPRO_BINARY_DIR) + "/fresh-candidates";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/cpu_tiny_swish_" + std::to_string(::getpid()) + ".py";
  {
    std::ifstream in(kRoot + "/tests/candidates/good/cpu_tiny_swish.py");
    std::ofstream out(path);
    out << in.rdbuf() << "# fresh source "
        << std::chrono::system_clock::now().time_since_epoch().count() << "\n";
  }
  Eval e = RunEval({"--problem", kTinySwish, "--precompiled-headers", "--candidate", path});
  std::filesystem::remove(path);
  ASSERT_EQ(e.results.size(), 1u) << e.stderr_text;
  const Json& r = e[0];
  EXPECT_EQ(Status(r), "correct") << r.dump(1);
  EXPECT_FALSE(r["build"]["cached"].get<bool>());
  const std::string notes = r["build"]["notes"].dump();
  EXPECT_NE(notes.find("main.cpp: torch/extension.h from the precompiled header"),
            std::string::npos)
      << notes;
}

TEST(EvalCpuTest, HumanOutputShowsVerdictTimesAndSpeedup) {
  Eval e =
      RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/good/cpu_tiny_swish.py"},
              /*json=*/false);
  ASSERT_EQ(e.exit_code, 0);
  for (const char* needle :
       {"status      correct", "reference   ", "candidate   ", "speedup     ", "% interval"}) {
    EXPECT_NE(e.stdout_text.find(needle), std::string::npos) << needle << "\n" << e.stdout_text;
  }
}

TEST(EvalCpuTest, TupleOutputsAreComparedElementByElement) {
  Eval e = RunEval({"--problem", "tests/problems/tuple_output.py", "--candidate",
                    "tests/candidates/good/cpu_tuple_output.py"});
  ASSERT_EQ(e.results.size(), 1u) << e.stderr_text;
  EXPECT_EQ(Status(e[0]), "correct") << e[0].dump(1);
}

TEST(EvalCpuTest, SeveralCandidatesBuildInParallelAndGetOneVerdictEach) {
  Eval e = RunEval({"--problem", kTinySwish, "-j", "2", "--candidate",
                    "tests/candidates/good/cpu_tiny_swish.py", "--candidate",
                    "tests/candidates/faults/cpu/compile_error.py"});
  ASSERT_EQ(e.results.size(), 2u) << e.stdout_text << e.stderr_text;
  EXPECT_EQ(Status(e[0]), "correct");
  EXPECT_EQ(Status(e[1]), "compile_error");
  // The compiler's own words are kept for the debug prompt.
  EXPECT_NE(e[1]["build"]["diagnostics"].get<std::string>().find("error"), std::string::npos)
      << e[1].dump(1);
}

// A correct CPU candidate for tiny_swish that, on its first forward call in each process, appends
// the CUDA_VISIBLE_DEVICES it was given to RECORD_DIR/<its file's name>.gpus and then sleeps
// `slow_s` when its file is named `slow_name`.py. Every copy has the same source, so they share
// one build scope: the extension (cpu_tiny_swish's load_inline call) builds once, not per copy.
std::string GpuRecordingCandidate(const std::string& record_dir, const std::string& slow_name,
                                  double slow_s) {
  std::ifstream in(kRoot + "/tests/candidates/good/cpu_tiny_swish.py");
  std::stringstream text;
  text << in.rdbuf();
  std::string code = text.str();
  const std::string forward = "        return _ext.swish(x)\n";
  const std::size_t at = code.find(forward);
  if (at == std::string::npos) return "";
  code.replace(
      at, forward.size(),
      "        global _recorded\n"
      "        if not _recorded:\n"
      "            _recorded = True\n"
      "            name = os.path.splitext(os.path.basename(__file__))[0]\n"
      "            with open(os.path.join(" +
          Json(record_dir).dump() +
          ", name + \".gpus\"), \"a\") as f:\n"
          "                f.write(os.environ.get(\"CUDA_VISIBLE_DEVICES\", \"<unset>\") + "
          "\"\\n\")\n"
          "            if name == " +
          Json(slow_name).dump() + ":\n                time.sleep(" + std::to_string(slow_s) +
          ")\n" + forward);
  return "import os\nimport time\n" + code + "\n_recorded = False\n";
}

TEST(EvalCpuTest, WithSeveralGpusEachCandidateRunsWhollyOnOneOfThemAndResultsKeepTheirOrder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kp_gpus_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The first candidate is slow (a sleep in each of its processes), so while one GPU's thread is
  // busy with it the other GPU's thread takes the next ones: both GPUs are used.
  const std::vector<std::string> names = {"gpus_slow", "gpus_fast_a", "gpus_fast_b"};
  // The recording candidates write outside their directory: unconfined, since this test is about
  // scheduling, not the sandbox.
  std::vector<std::string> args = {"--problem", kTinySwish, "--gpus", "0,1", "--unsafe-no-sandbox"};
  for (const std::string& name : names) {
    std::string code = GpuRecordingCandidate(dir.string(), "gpus_slow", 2.0);
    ASSERT_FALSE(code.empty());
    std::ofstream((dir / (name + ".py")).string()) << code;
    args.insert(args.end(), {"--candidate", (dir / (name + ".py")).string()});
  }
  Eval e = RunEval(args);
  ASSERT_EQ(e.exit_code, 0) << e.stderr_text;
  ASSERT_EQ(e.results.size(), names.size()) << e.stdout_text;
  std::set<std::string> used;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Json& r = e[i];
    const std::string& name = names[i];
    // In input order, whichever finished first.
    EXPECT_EQ(fs::path(JsonGet<std::string>(r, "candidate", "")).stem().string(), name);
    EXPECT_EQ(Status(r), "correct") << r.dump(1);
    const std::string gpu = JsonGet<std::string>(r, "gpu", "");
    EXPECT_TRUE(gpu == "0" || gpu == "1") << name << " ran on '" << gpu << "'";
    used.insert(gpu);
    // Every process of the candidate (check, each timing round) saw exactly that one GPU.
    std::ifstream record(dir / (name + ".gpus"));
    std::vector<std::string> seen;
    for (std::string line; std::getline(record, line);) seen.push_back(line);
    EXPECT_GE(seen.size(), 1u) << name;  // its one process: load, check and timing
    for (const std::string& line : seen) EXPECT_EQ(line, gpu) << name;
  }
  EXPECT_EQ(used, (std::set<std::string>{"0", "1"}));
  fs::remove_all(dir);
}

TEST(EvalCpuTest, BadGpuListsAreAClearErrorWithExitCode2) {
  for (const auto& [gpus, needle] :
       std::vector<std::pair<std::string, std::string>>{{"0,,1", "empty GPU ordinal"},
                                                        {"a", "'a' is not a GPU ordinal"},
                                                        {"H200", "use --gpu"},
                                                        {"1,1", "GPU 1 is listed twice"}}) {
    Eval e = RunEval({"--problem", kTinySwish, "--candidate",
                      "tests/candidates/good/cpu_tiny_swish.py", "--gpus", gpus},
                     /*json=*/false);
    EXPECT_EQ(e.exit_code, 2) << gpus;
    EXPECT_NE(e.stderr_text.find("--gpus: "), std::string::npos) << e.stderr_text;
    EXPECT_NE(e.stderr_text.find(needle), std::string::npos) << e.stderr_text;
  }
}

// ---- Adversarial candidates: each is caught and scored incorrect. ----

struct Cheat {
  const char* candidate;
  const char* problem;
  const char* needle;  // part of the message a user reads
  bool static_checks;
};

// Printed in test names as its name, not its bytes: ctest's names (and its cost data) stay the
// same from build to build.
void PrintTo(const Cheat& c, std::ostream* os) { *os << c.candidate; }

class CheatTest : public ::testing::TestWithParam<Cheat> {};

TEST_P(CheatTest, IsCaughtAndScoredIncorrect) {
  const Cheat& c = GetParam();
  std::vector<std::string> args = {"--problem", c.problem, "--candidate", c.candidate};
  if (!c.static_checks) args.push_back("--no-static-checks");
  Eval e = RunEval(args);
  ASSERT_EQ(e.exit_code, 1) << e.stderr_text;  // a candidate that is not correct
  ASSERT_EQ(e.results.size(), 1u) << e.stdout_text;
  EXPECT_VERDICT(e[0], "incorrect", c.needle);
}

INSTANTIATE_TEST_SUITE_P(
    Adversarial, CheatTest,
    ::testing::Values(
        Cheat{"tests/candidates/adversarial/cpu/side_stream.py", kTinySwish, "", true},
        Cheat{"tests/candidates/adversarial/common/cache_first_call.py", kTinySwish,
              "trial check_1", true},
        // The refill trial always catches it; an earlier trial does when the allocator happens
        // to hand its fresh input the address of a freed one (CI saw extra_0 do it).
        Cheat{"tests/candidates/adversarial/common/cache_by_pointer.py", kTinySwish, "trial ",
              true},
        Cheat{"tests/candidates/adversarial/cpu/mutate_input.py", kTinySwish, "modified input 0",
              true},
        Cheat{"tests/candidates/adversarial/cpu/alias_output.py", kTinySwish, "aliases input 0",
              true},
        Cheat{"tests/candidates/adversarial/common/freed_memory.py", kTinySwish, "trial check_0",
              true},
        Cheat{"tests/candidates/adversarial/common/calls_reference_op.py", kTinySwish,
              "calls sigmoid", true},
        Cheat{"tests/candidates/adversarial/common/patch_sync.py", kTinySwish, "rebinds", true},
        Cheat{"tests/candidates/adversarial/common/patch_sync.py", kTinySwish, "time.perf_counter",
              false},
        // Rebinds its timer object's own attributes from inside its process (no module or class
        // is touched): the timer names what changed after every block.
        Cheat{"tests/candidates/adversarial/common/fake_timer.py", kTinySwish,
              "rebound the harness's timer (Timer._run", false},
        Cheat{"tests/candidates/adversarial/common/patch_allclose.py", kTinySwish, "torch.allclose",
              true},
        Cheat{"tests/candidates/adversarial/common/patch_allclose.py", kTinySwish,
              "rebound torch.allclose", false},
        Cheat{"tests/candidates/adversarial/common/rebind_reference.py", kTinySwish, "Model", true},
        Cheat{"tests/candidates/adversarial/common/rebind_reference.py", kTinySwish,
              "trial check_0", false},
        Cheat{"tests/candidates/adversarial/common/identity_relu.py", "tests/problems/relu_rand.py",
              "trial extra_0", true},
        Cheat{"tests/candidates/adversarial/cpu/low_precision.py", "tests/problems/small_matmul.py",
              "lowered precision", true},
        Cheat{"tests/candidates/adversarial/common/zeros.py", "tests/problems/vacuous.py",
              "relative error", true},
        // The torch-operator policy by what runs: every spelling of the reference's GEMM is
        // named by the aten operator it reached, with or without the static scan.
        Cheat{"tests/candidates/adversarial/common/calls_reference_op.py", kTinySwish,
              "forward calls aten.sigmoid, an operator the reference uses", false},
        Cheat{"tests/candidates/adversarial/common/linear_functional.py", kSmallLinear,
              "forward calls aten.addmm, an operator the reference uses", true},
        Cheat{"tests/candidates/adversarial/common/linear_matmul_operator.py", kSmallLinear,
              "forward calls aten.mm, which does the reference's gemm", true},
        Cheat{"tests/candidates/adversarial/common/linear_tensor_method.py", kSmallLinear,
              "forward calls aten.mm", true},
        Cheat{"tests/candidates/adversarial/common/linear_submodule.py", kSmallLinear,
              "calls nn.Linear", true},
        Cheat{"tests/candidates/adversarial/common/linear_submodule.py", kSmallLinear,
              "forward calls aten.addmm", false},
        Cheat{"tests/candidates/adversarial/common/linear_helper.py", kSmallLinear,
              "forward calls aten.addmm", true},
        Cheat{"tests/candidates/adversarial/cpu/linear_cpp_aten.py", kSmallLinear,
              "forward calls aten.addmm", true},
        // Outputs cross processes as plain data: an unpickling payload is refused by its type.
        Cheat{"tests/candidates/adversarial/common/tensor_subclass.py", kTinySwish,
              "output 0 is a EvilTensor, a subclass of torch.Tensor", true}),
    [](const ::testing::TestParamInfo<Cheat>& info) {
      return TestName(info.param.candidate) + (info.param.static_checks ? "" : "_RuntimeOnly") +
             "_" + std::to_string(info.index);
    });

// Replays of earlier results: no timed input repeats any input seen before, by this process or
// any other, so a cache keyed on contents gains nothing (its 20 ms stand-in for work is paid on
// every call), and a cache keyed on what survives the rescaling is caught on a timed call.
TEST(EvalCpuTest, AResultCacheKeyedOnInputContentsGainsNothing) {
  Eval e = RunEval({"--problem", kTinySwish, "--candidate",
                    "tests/candidates/adversarial/common/replay_by_content.py"});
  ASSERT_EQ(e.results.size(), 1u) << e.stderr_text;
  EXPECT_EQ(Status(e[0]), "correct") << e[0].dump(1);
  // Every timed call computed: none is faster than the candidate's own sleep.
  EXPECT_GE(e[0]["candidate_timing"]["min_ms"].get<double>(), 19.0) << e[0].dump(1);
}

TEST(EvalCpuTest, AReplayThroughAFileSharedByEveryProcessAndRunGainsNothing) {
  namespace fs = std::filesystem;
  const fs::path replay = "/tmp/kernelpro-replay-attack";
  fs::remove_all(replay);
  // Unconfined, so the file outlives each process and run: the strongest form of the attack.
  for (int run = 0; run < 2; ++run) {
    Eval e = RunEval({"--problem", kTinySwish, "--unsafe-no-sandbox", "--candidate",
                      "tests/candidates/adversarial/common/replay_through_file.py"});
    ASSERT_EQ(e.results.size(), 1u) << e.stderr_text;
    EXPECT_EQ(Status(e[0]), "correct") << e[0].dump(1);
    EXPECT_GE(e[0]["candidate_timing"]["min_ms"].get<double>(), 19.0) << "run " << run;
  }
  EXPECT_FALSE(fs::is_empty(replay));  // it did store its answers
  fs::remove_all(replay);
}

TEST(EvalCpuTest, AReplayKeyedOnWhatSurvivesTheRescalingIsCaughtOnATimedCall) {
  Eval e = RunEval({"--problem", kTinySwish, "--candidate",
                    "tests/candidates/adversarial/common/replay_by_sign.py"});
  ASSERT_EQ(e.results.size(), 1u) << e.stderr_text;
  EXPECT_VERDICT(e[0], "incorrect", "while being timed: timed call ");
}

TEST(EvalCpuTest, HonestCandidatesForTheCheatProblemsPass) {
  for (auto [problem, candidate] : std::vector<std::pair<const char*, const char*>>{
           {"tests/problems/relu_rand.py", "tests/candidates/good/cpu_relu_rand.py"},
           {"tests/problems/small_matmul.py", "tests/candidates/good/cpu_small_matmul.py"},
           {"tests/problems/vacuous.py", "tests/candidates/good/cpu_vacuous.py"},
           {kSmallLinear, "tests/candidates/good/cpu_small_linear.py"}}) {
    Eval e = RunEval({"--problem", problem, "--candidate", candidate});
    ASSERT_EQ(e.results.size(), 1u) << problem << e.stderr_text;
    EXPECT_EQ(Status(e[0]), "correct") << problem << "\n" << e[0].dump(1);
  }
}

TEST(EvalCpuTest, VacuousProblemIsReported) {
  Eval e = RunEval({"--problem", "tests/problems/vacuous.py", "--candidate",
                    "tests/candidates/good/cpu_vacuous.py"});
  ASSERT_EQ(e.results.size(), 1u);
  EXPECT_NE(e[0]["reference"]["vacuous"].get<std::string>().find("all-zero"), std::string::npos);
}

// ---- Faults: classified, and the next evaluation is unaffected. ----

struct Fault {
  const char* candidate;
  const char* status;
  const char* needle;
};

// Printed in test names as its name, not its bytes: ctest's names (and its cost data) stay the
// same from build to build.
void PrintTo(const Fault& f, std::ostream* os) { *os << f.candidate; }

class FaultTest : public ::testing::TestWithParam<Fault> {};

TEST_P(FaultTest, IsClassifiedWithAShortMessage) {
  const Fault& f = GetParam();
  Eval e = RunEval({"--problem", kTinySwish, "--candidate", f.candidate, "--timeout", "20"});
  ASSERT_EQ(e.exit_code, 1) << e.stderr_text;  // a candidate that is not correct
  ASSERT_EQ(e.results.size(), 1u) << e.stdout_text;
  EXPECT_VERDICT(e[0], f.status, f.needle);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultTest,
    ::testing::Values(
        Fault{"tests/candidates/faults/cpu/segfault.py", "runtime_error", "SIGSEGV"},
        Fault{"tests/candidates/faults/cpu/abort.py", "runtime_error", "SIGABRT"},
        Fault{"tests/candidates/faults/cpu/endless_loop.py", "timeout", "timed out"},
        Fault{"tests/candidates/faults/common/gpu_oom.py", "runtime_error", "out of memory"},
        Fault{"tests/candidates/faults/common/flood_stdout.py", "runtime_error",
              "printed more than"},
        Fault{"tests/candidates/faults/common/raises.py", "runtime_error", "boom"},
        Fault{"tests/candidates/faults/common/syntax_error.py", "compile_error", "syntax error"},
        Fault{"tests/candidates/faults/common/no_modelnew.py", "compile_error", "ModelNew"},
        Fault{"tests/candidates/faults/cpu/compile_error.py", "compile_error", "error"},
        Fault{"tests/candidates/faults/common/wrong_shape.py", "incorrect", "shape"},
        Fault{"tests/candidates/faults/cpu/wrong_dtype.py", "incorrect", "dtype"},
        // Bad values get a verdict on the values, never "worker exit 0 during compare".
        Fault{"tests/candidates/faults/common/nan_output.py", "incorrect",
              "trial check_0: output 0 has 4096 NaN values (of 4096)"},
        Fault{"tests/candidates/faults/cpu/never_written.py", "incorrect", "trial check_0: "}),
    [](const ::testing::TestParamInfo<Fault>& info) { return TestName(info.param.candidate); });

TEST(EvalCpuTest, ACrashDoesNotAffectTheNextCandidate) {
  Eval e =
      RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/faults/cpu/segfault.py",
               "--candidate", "tests/candidates/good/cpu_tiny_swish.py"});
  ASSERT_EQ(e.results.size(), 2u);
  EXPECT_EQ(Status(e[0]), "runtime_error");
  EXPECT_EQ(Status(e[1]), "correct");
}

bool HasFinding(const Json& result, const std::string& rule, const std::string& needle) {
  for (const Json& f : JsonGet<Json>(result, "findings", Json::array())) {
    if (JsonGet<std::string>(f, "rule", "") == rule &&
        JsonGet<std::string>(f, "message", "").find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// The attack of issue 13: a candidate that rewrites the cached expected outputs (and meta.json's
// manifests, so the cache is consistent on its own) and returns what it wrote. In the sandbox it
// cannot even see the cache (IsolationTest); this is the second line of defence, the content
// hashes, tested where the first is off (--unsafe-no-sandbox).
TEST(EvalCpuTest, ACandidateThatRewritesTheReferenceIsNotBelievedAndHonestOnesStillPass) {
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache-poison";
  std::filesystem::remove_all(cache);
  const char* poison = "tests/candidates/adversarial/common/poison_reference.py";
  const char* good = "tests/candidates/good/cpu_tiny_swish.py";
  // In one run: the poisoner is never correct; the honest candidate after it is, once the
  // reference it found changed has been recomputed.
  // Static checks off: the scan refuses its reading of the harness's stack frames, and this
  // test is about what happens when that is not seen.
  Eval e = RunEval({"--problem", kTinySwish, "--cache-dir", cache, "--unsafe-no-sandbox",
                    "--no-static-checks", "--candidate", poison, "--candidate", good});
  ASSERT_EQ(e.exit_code, 1) << e.stderr_text;  // the poisoner is not correct
  ASSERT_EQ(e.results.size(), 2u) << e.stdout_text;
  EXPECT_VERDICT(e[0], "runtime_error", "changed on disk again");
  const char* what =
      "the reference's expected/check_0.kpt changed after the reference step wrote "
      "it (its content hash is ";
  EXPECT_VERDICT(e[0], "runtime_error", what);
  EXPECT_EQ(Status(e[1]), "correct") << e[1].dump(1);
  EXPECT_TRUE(HasFinding(e[1], "reference_changed", "it was recomputed")) << e[1].dump(1);
  // The poisoner alone leaves a poisoned cache behind; the next run sees it and recomputes.
  Eval alone = RunEval({"--problem", kTinySwish, "--cache-dir", cache, "--unsafe-no-sandbox",
                        "--no-static-checks", "--candidate", poison});
  ASSERT_EQ(alone.results.size(), 1u) << alone.stderr_text;
  EXPECT_NE(Status(alone[0]), "correct") << alone[0].dump(1);
  Eval next = RunEval(
      {"--problem", kTinySwish, "--cache-dir", cache, "--unsafe-no-sandbox", "--candidate", good});
  ASSERT_EQ(next.results.size(), 1u) << next.stderr_text;
  EXPECT_EQ(Status(next[0]), "correct") << next[0].dump(1);
  EXPECT_NE(next[0]["reference"]["notes"].dump().find("failed its content check"),
            std::string::npos)
      << next[0]["reference"].dump(1);
  std::filesystem::remove_all(cache);
}

// A misspelt path is the user's mistake, not the candidate's: a usage error (exit 2) naming the
// file, never a compile_error verdict with exit 0.
TEST(EvalCpuTest, MissingCandidateFileIsAUsageErrorNotAVerdict) {
  Eval e = RunEval({"--problem", kTinySwish, "--candidate", "tests/candidates/does_not_exist.py"});
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.stderr_text.find("does_not_exist.py: no such file"), std::string::npos)
      << e.stderr_text;
}

// ---- Broken problems: the evaluation cannot run; a clear error, exit code 2. ----

struct BrokenProblem {
  const char* problem;
  const char* needle;  // what the error must say
};
void PrintTo(const BrokenProblem& b, std::ostream* os) { *os << b.problem; }

class ProblemErrorTest : public ::testing::TestWithParam<BrokenProblem> {};

TEST_P(ProblemErrorTest, IsAClearErrorWithExitCode2) {
  auto [problem, needle] = GetParam();
  Eval e =
      RunEval({"--problem", problem, "--candidate", "tests/candidates/good/cpu_tiny_swish.py"});
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.stderr_text.find(needle), std::string::npos) << e.stderr_text;
  ASSERT_EQ(e.results.size(), 1u);
  EXPECT_TRUE(e[0]["status"].is_null());
}

INSTANTIATE_TEST_SUITE_P(
    Problems, ProblemErrorTest,
    ::testing::Values(BrokenProblem{"tests/problems/no_model.py", "Model"},
                      BrokenProblem{"tests/problems/no_get_inputs.py", "get_inputs"},
                      BrokenProblem{"tests/problems/syntax_error.py", "syntax error"},
                      BrokenProblem{"tests/problems/nondeterministic.py", "nondeterministic"},
                      BrokenProblem{"tests/problems/raising_inputs.py",
                                    "problem error: get_inputs() failed: FileNotFoundError: "
                                    "inputs.npy: no such file"},
                      BrokenProblem{"tests/problems/nan_reference.py",
                                    "the reference's output 0 on trial check_0 has "}),
    [](const auto& info) { return TestName(info.param.problem); });

// A problem that cannot make its inputs is refused before any candidate is built: in an empty
// cache, the C++ candidate's build would take a minute here and leave its build scope behind.
TEST(EvalCpuTest, AProblemWhoseInputsRaiseIsRefusedBeforeAnyBuild) {
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache-raising-inputs";
  std::filesystem::remove_all(cache);
  Eval e = RunEval({"--problem", "tests/problems/raising_inputs.py", "--candidate",
                    "tests/candidates/good/cpu_tiny_swish.py", "--cache-dir", cache});
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.stderr_text.find("get_inputs() failed"), std::string::npos) << e.stderr_text;
  // A build leaves files in its scope (sources, objects, the record); the scan leaves none.
  std::error_code ec;
  if (std::filesystem::exists(cache + "/builds", ec)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(cache + "/builds")) {
      EXPECT_FALSE(entry.is_regular_file()) << "a build ran: " << entry.path();
    }
  }
  std::filesystem::remove_all(cache);
}

// The CUTLASS tree the build step uses: kept by a run (resume), sent in every request to a process
// that imports a candidate, and readable in its sandbox.
TEST(EvalOptionsTest, TheCutlassTreeSurvivesAStoredRun) {
  EvalOptions options;
  options.cutlass_include_dir = "/opt/cutlass/include";
  options.cutlass_version = "4.2.0";
  EvalOptions back = EvalOptionsFromJson(ToJson(options));
  EXPECT_EQ(back.cutlass_include_dir, "/opt/cutlass/include");
  EXPECT_EQ(back.cutlass_version, "4.2.0");
  EXPECT_EQ(EvalOptionsFromJson(Json::object()).cutlass_include_dir, "");
}

Executor CutlassExecutor(const std::string& include_dir, const std::string& version) {
  WorkerOptions worker;
  worker.worker_path = kRoot + "/tests/fixtures/fake_worker";
  worker.scratch_dir = std::string(KERNELPRO_BINARY_DIR) + "/cutlass-request-scratch";
  auto client = WorkerClient::Create(worker);
  EXPECT_TRUE(client.ok()) << client.status().message();
  EvalOptions options;
  options.cutlass_include_dir = include_dir;
  options.cutlass_version = version;
  return Executor(*client, options);
}

TEST(ExecutorRequestTest, ACandidatesProcessIsToldTheCutlassTreeAndMayReadIt) {
  const std::string root = std::string(KERNELPRO_BINARY_DIR) + "/request-test-cutlass";
  std::filesystem::create_directories(root + "/include/cutlass");
  std::filesystem::create_directories(root + "/tools/util/include");
  const std::string candidate = kRoot + "/tests/candidates/good/cpu_tiny_swish.py";
  Json request = CutlassExecutor(root + "/include", "4.2.0").CandidateRequest(candidate, Json());
  EXPECT_EQ(request["cutlass"], Json({{"include_dir", root + "/include"}, {"version", "4.2.0"}}));
  for (const std::string step : {"build", "serve"}) {
    const std::vector<std::string> readable = MountsForRequest(step, request).read_only;
    for (const std::string& path : {root + "/include", root + "/tools/util/include"}) {
      EXPECT_NE(std::find(readable.begin(), readable.end(), path), readable.end())
          << step << " cannot read " << path;
    }
  }
  // No tree known: nothing is sent (a candidate including CUTLASS fails its build saying so).
  EXPECT_FALSE(CutlassExecutor("", "").CandidateRequest(candidate, Json()).contains("cutlass"));
}

}  // namespace eval_executor_test
}  // namespace kernelpro::eval
