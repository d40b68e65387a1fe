#include "search/orchestrator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>

#include "agents/benchmarking_agent.h"
#include "agents/cutlass_tools.h"
#include "llm/client.h"
#include "llm/scripted_backend_testing.h"
#include "report/run_report.h"
#include "report/stored_run.h"
#include "search/reward.h"

namespace kernelpro::search {
namespace search_orchestrator_test {

namespace fs = std::filesystem;
using llm::testing::ScriptedBackend;
using llm::testing::TextResponse;

// A candidate file whose verdict the fake evaluator reads from its "# fake:" line:
//   "correct 1.50 1.40 1.60" (estimate, low, high), "compile_error", "incorrect 0.5", ...
std::string FakeCandidate(const std::string& verdict, const std::string& tag) {
  return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
         "# fake: " +
         verdict + "\n# " + tag +
         "\n_CPP = r\"\"\"torch::Tensor f(torch::Tensor x);\"\"\"\n"
         "_CU = r\"\"\"__global__ void k(float* y) {}\ntorch::Tensor f(torch::Tensor x) { return "
         "x; "
         "}\"\"\"\n"
         "_ext = load_inline(name=\"kp_fake\", cpp_sources=_CPP, cuda_sources=_CU, "
         "functions=[\"f\"])\n\n\n"
         "class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.f(x)\n";
}

// The programmer's reply: one JSON object with the candidates.
llm::Response Reply(const std::vector<std::pair<std::string, std::string>>& candidates) {
  Json list = Json::array();
  for (const auto& [strategy, code] : candidates)
    list.push_back({{"strategy", strategy}, {"code", code}});
  return TextResponse(DumpJson(Json{{"candidates", list}}), llm::Usage{100, 50});
}

llm::Response AnalysisReply(const std::string& summary) {
  Json j{{"bottleneck", "memory"},
         {"severity", "high"},
         {"summary", summary},
         {"recommendations",
          Json::array(
              {{{"priority", 1}, {"action", "vectorise the loads"}, {"rationale", "bandwidth"}}})}};
  return TextResponse(DumpJson(j), llm::Usage{80, 40});
}

class FakeEvaluator : public CandidateEvaluator {
 public:
  Result<std::vector<eval::EvalResult>> Evaluate(
      const std::string&, const std::vector<std::string>& candidates) override {
    ++evaluate_calls;
    if (fail_next_evaluate) {
      fail_next_evaluate = false;
      return Status::Unavailable("no device (scripted)");
    }
    std::vector<eval::EvalResult> results;
    for (const std::string& path : candidates) {
      evaluated.push_back(path);
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      std::smatch m;
      std::string code = text.str();
      eval::EvalResult r;
      r.candidate = path;
      if (!std::regex_search(code, m, std::regex("# fake: (\\w+)([^\\n]*)"))) {
        r.status = eval::EvalStatus::kRuntimeError;
        r.message = "no fake verdict";
        results.push_back(r);
        continue;
      }
      std::istringstream args(m[2].str());
      const std::string status = m[1].str();
      if (status == "correct") {
        RatioInterval s;
        args >> s.estimate >> s.low >> s.high;
        s.confidence = 0.95;
        r.status = eval::EvalStatus::kCorrect;
        r.speedup = s;
        eval::TimingSummary t;
        t.summary.median = 1.0 / s.estimate;
        // An optional fourth number: the candidate's IQR / median.
        if (double spread = 0; args >> spread) t.summary.relative_spread = spread;
        r.candidate_time = t;
      } else if (status == "incorrect") {
        double err = 1;
        args >> err;
        r.status = eval::EvalStatus::kIncorrect;
        r.message = "outputs differ from the reference";
        r.correctness = Json::array({{{"passed", false}, {"max_abs_err", err}}});
      } else {
        r.status = eval::EvalStatus::kCompileError;
        r.message = "the build failed";
        r.diagnostics = "main.cpp:3:5: error: expected ';' before '}' token";
      }
      results.push_back(r);
    }
    return results;
  }
  // Called from several threads at once when the run has several GPUs. With `rendezvous` set, a
  // call waits (up to 20 s) until that many calls are in flight together.
  Result<profile::Metrics> Profile(const std::string&, const std::string& candidate) override {
    std::unique_lock<std::mutex> lock(mu);
    profiled.push_back(candidate);
    ++in_flight;
    most_in_flight = std::max(most_in_flight, in_flight);
    arrived.notify_all();
    if (rendezvous > 0) {
      arrived.wait_for(lock, std::chrono::seconds(20),
                       [&] { return most_in_flight >= rendezvous; });
    }
    --in_flight;
    profile::Metrics m;
    m.notes.push_back("scripted profile: no views");
    // A candidate tagged "instructions: N" gets one ncu kernel with the energy proxy's counters:
    // 1000 DRAM bytes, 100 coalesced load sectors, no spills, N warp instructions.
    std::ifstream in(candidate);
    std::stringstream text;
    text << in.rdbuf();
    std::smatch found;
    const std::string code = text.str();
    if (std::regex_search(code, found, std::regex("# instructions: (\\d+)"))) {
      profile::NcuKernel k;
      k.name = "k";
      k.values = {{"dram__bytes_read.sum", 600},
                  {"dram__bytes_write.sum", 400},
                  {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 100},
                  {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", 4},
                  {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 0},
                  {"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 0},
                  {"smsp__inst_executed.sum", std::stod(found[1].str())}};
      m.ncu.emplace();
      m.ncu->kernels.push_back(k);
      m.ncu->aggregate = k;
    }
    return m;
  }

  int evaluate_calls = 0;
  bool fail_next_evaluate = false;
  std::vector<std::string> evaluated, profiled;
  std::mutex mu;
  std::condition_variable arrived;
  int in_flight = 0, most_in_flight = 0, rendezvous = 0;
};

class OrchestratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kp_orch_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    problem_ = (dir_ / "problem.py").string();
    std::ofstream(problem_)
        << "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
           "    def forward(self, x):\n        return x * torch.sigmoid(x)\n\n\n"
           "def get_inputs():\n    return [torch.randn(16)]\n\n\n"
           "def get_init_inputs():\n    return []\n";
    OpenStore();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  void OpenStore() {
    auto store = store::RunStore::Open((dir_ / "run").string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }

  RunConfig Options(int iterations, const std::string& search = "greedy") {
    RunConfig o;
    o.problem = problem_;
    o.iterations = iterations;
    o.candidates = 2;
    o.search = search;
    o.memory = false;
    o.device = "cpu";
    o.run_dir = (dir_ / "run").string();
    return o;
  }

  // Runs an orchestrator over a fresh reliable client around `scripted`, as the CLI does.
  Result<OptimizeSummary> RunWith(ScriptedBackend* scripted, RunConfig options,
                                  std::unique_ptr<Orchestrator>* keep = nullptr,
                                  agents::BenchmarkingAgent* benchmarking = nullptr) {
    sink_ = std::make_unique<ExchangeSink>();
    llm::ClientOptions client;
    client.max_attempts = 1;
    client.on_exchange = sink_->Hook();
    // The scripted backend is owned by the test; a forwarding shell is what the client owns.
    struct Forward : llm::Backend {
      explicit Forward(llm::Backend* b) : b(b) {}
      std::string provider() const override { return b->provider(); }
      std::string model() const override { return b->model(); }
      llm::Outcome Complete(const llm::Request& r) override { return b->Complete(r); }
      llm::Backend* b;
    };
    backend_ = llm::MakeReliableBackend(std::make_unique<Forward>(scripted), client);
    OrchestratorDependencies deps;
    deps.backend = backend_.get();
    deps.evaluator = &evaluator_;
    deps.store = store_.get();
    deps.exchanges = sink_.get();
    deps.progress = [this](const IterationProgress& p) { progress_.push_back(p); };
    deps.benchmarking = benchmarking;
    deps.measure_energy = measure_energy_;
    auto orchestrator = std::make_unique<Orchestrator>(std::move(options), std::move(deps));
    auto summary = orchestrator->Run();
    if (keep) *keep = std::move(orchestrator);
    return summary;
  }

  // Runs an orchestrator over a fresh reliable client around a shared backend (the programmer
  // and the memory extractor both use it), with `cutlass` as the CUTLASS kit when given.
  Result<OptimizeSummary> RunShared(std::shared_ptr<llm::Backend> shared, RunConfig options,
                                    const agents::CutlassKit* cutlass = nullptr,
                                    std::map<int, NodeInfo>* nodes = nullptr) {
    sink_ = std::make_unique<ExchangeSink>();
    llm::ClientOptions client;
    client.max_attempts = 1;
    client.on_exchange = sink_->Hook();
    struct Forward : llm::Backend {
      explicit Forward(std::shared_ptr<llm::Backend> b) : b(std::move(b)) {}
      std::string provider() const override { return b->provider(); }
      std::string model() const override { return b->model(); }
      llm::Outcome Complete(const llm::Request& r) override { return b->Complete(r); }
      std::shared_ptr<llm::Backend> b;
    };
    std::shared_ptr<llm::Backend> backend =
        llm::MakeReliableBackend(std::make_unique<Forward>(std::move(shared)), client);
    OrchestratorDependencies deps;
    deps.backend = backend.get();
    deps.memory_backend = backend;
    deps.evaluator = &evaluator_;
    deps.store = store_.get();
    deps.exchanges = sink_.get();
    deps.cutlass = cutlass;
    Orchestrator orchestrator(std::move(options), std::move(deps));
    auto summary = orchestrator.Run();
    if (nodes) *nodes = orchestrator.nodes();
    return summary;
  }

  int CountSteps(const std::string& step) {
    int n = 0;
    auto last = store_->LastJournaledIteration(1);
    for (int it = 1; it <= last->value_or(0); ++it) {
      auto steps = store_->StepsForIteration(1, it);
      for (const store::StepRecord& s : *steps) {
        if (s.key.step == step && s.state == store::StepState::kDone) ++n;
      }
    }
    return n;
  }

  fs::path dir_;
  std::string problem_;
  std::unique_ptr<store::RunStore> store_;
  std::unique_ptr<ExchangeSink> sink_;
  std::unique_ptr<llm::Backend> backend_;
  FakeEvaluator evaluator_;
  std::vector<IterationProgress> progress_;
  // RunWith's NVML meter (OrchestratorDependencies::measure_energy); null: none.
  std::function<Result<Json>(const std::vector<std::string>&, const RunConfig&)> measure_energy_;
};

TEST_F(OrchestratorTest, RunsItsIterationsAndStoresEveryStep) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"seed a", FakeCandidate("compile_error", "a")},
                       {"seed b", FakeCandidate("correct 1.20 1.10 1.30", "b")}}));
  scripted.Push(Reply({{"opt c", FakeCandidate("correct 1.50 1.40 1.60", "c")},
                       {"opt d", FakeCandidate("incorrect 0.3", "d")}}));
  scripted.Push(Reply({{"opt e", FakeCandidate("correct 1.55 1.45 1.65", "e")},
                       {"opt f", FakeCandidate("runtime_error", "f")}}));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(3), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();

  EXPECT_EQ(summary->stop, StopReason::kIterations);
  EXPECT_EQ(summary->iterations_done, 3);
  EXPECT_EQ(scripted.calls(), 3);
  EXPECT_EQ(summary->exchanges, 3);
  ASSERT_TRUE(summary->best.has_value());
  const Tree& tree = orchestrator->tree();
  EXPECT_EQ(tree.size(), 7);
  EXPECT_DOUBLE_EQ(tree.node(*summary->best).speedup->estimate, 1.55);

  // Greedy: seeds, then optimise the best working node twice.
  ASSERT_EQ(progress_.size(), 3u);
  EXPECT_EQ(progress_[0].mode, agents::PromptMode::kInitial);
  EXPECT_EQ(progress_[1].mode, agents::PromptMode::kOptimize);
  EXPECT_EQ(progress_[2].mode, agents::PromptMode::kOptimize);
  EXPECT_EQ(progress_[2].iteration, 3);
  ASSERT_TRUE(progress_[2].best.has_value());
  EXPECT_DOUBLE_EQ(progress_[2].best->estimate, 1.55);
  EXPECT_NE(progress_[0].outcome.find("compile_error"), std::string::npos);

  // The store: one run, ROOT plus six nodes, six candidates with one evaluation each, three
  // programmer exchanges tagged with their iterations.
  auto nodes = store_->ListNodes(1);
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->size(), 7u);
  EXPECT_EQ(CountSteps("record"), 3);
  EXPECT_EQ(CountSteps("evaluate"), 6);
  auto exchanges = store_->ListLlmExchanges(1);
  ASSERT_EQ(exchanges->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*exchanges)[i].purpose, "programmer");
    EXPECT_EQ((*exchanges)[i].iteration, i + 1);
    EXPECT_EQ((*exchanges)[i].step_key, "generate");
  }
  auto run = store_->GetRun(1);
  EXPECT_EQ(run->status, store::RunStatus::kFinished);
  // Candidate sources are files of the run directory.
  EXPECT_TRUE(fs::exists(dir_ / "run" / "candidates" / "0001.py"));
  EXPECT_EQ(evaluator_.evaluated.size(), 6u);
  // On cpu nothing is profiled, and the run says so.
  EXPECT_TRUE(evaluator_.profiled.empty());
  ASSERT_FALSE(summary->notes.empty());
}

// --seed acts on the model's sampling: each programmer request of a seeded run carries
// (seed × 1000003 + iteration × 1000) mod 2^31 + i, so repeats of a suite with seeds 7 and 8 ask
// the server for different samples; a run without --seed sends none, as before seeds existed.
std::vector<std::optional<std::uint64_t>> SeedsOf(const ScriptedBackend& backend) {
  std::vector<std::optional<std::uint64_t>> seeds;
  for (const llm::Request& r : backend.Requests()) seeds.push_back(r.seed);
  return seeds;
}

TEST_F(OrchestratorTest, ASeededRunSendsSeedsDerivedFromItsSeedAndIteration) {
  auto run = [this](std::optional<std::uint64_t> seed) {
    store_.reset();
    fs::remove_all(dir_ / "run");
    OpenStore();
    ScriptedBackend scripted;
    scripted.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
    scripted.Push(Reply({{"b", FakeCandidate("correct 1.30 1.20 1.40", "b")}}));
    RunConfig options = Options(2);
    if (seed) {
      options.seed = *seed;
      options.seed_given = true;
    }
    auto summary = RunWith(&scripted, options);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return SeedsOf(scripted);
  };
  using Seeds = std::vector<std::optional<std::uint64_t>>;
  const Seeds seven = run(7);
  EXPECT_EQ(seven, (Seeds{7000021 + 1000, 7000021 + 2000}));
  const Seeds eight = run(8);
  EXPECT_EQ(eight, (Seeds{8000024 + 1000, 8000024 + 2000}));
  EXPECT_EQ(run(7), seven) << "the same seed asks the same";
  EXPECT_EQ(run(std::nullopt), (Seeds{std::nullopt, std::nullopt}));
  // A large seed stays within what every server takes (31 bits).
  for (const auto& s : run(std::uint64_t{1} << 63)) {
    ASSERT_TRUE(s.has_value());
    EXPECT_LT(*s, std::uint64_t{1} << 31);
  }
}

TEST_F(OrchestratorTest, AtSeveralTemperaturesEachCandidatesRequestHasItsOwnSeed) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  scripted.Push(Reply({{"b", FakeCandidate("correct 1.30 1.20 1.40", "b")}}));
  RunConfig options = Options(1);
  options.temperatures = {0.2, 0.8};
  options.seed = 7;
  options.seed_given = true;
  ASSERT_TRUE(RunWith(&scripted, options).ok());
  EXPECT_EQ(SeedsOf(scripted), (std::vector<std::optional<std::uint64_t>>{7001021, 7001022}));
}

TEST_F(OrchestratorTest, AResumedRunKeepsItsSeedAndAsksWhatItWouldHaveAsked) {
  ScriptedBackend first;
  first.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  RunConfig options = Options(1);
  options.seed = 7;
  options.seed_given = true;
  ASSERT_TRUE(RunWith(&first, options).ok());
  // `kernelpro resume` asks for more iterations with the run's stored options, not its own seed.
  ScriptedBackend second;
  second.Push(Reply({{"b", FakeCandidate("correct 1.30 1.20 1.40", "b")}}));
  ASSERT_TRUE(RunWith(&second, Options(2)).ok());
  EXPECT_EQ(SeedsOf(first), (std::vector<std::optional<std::uint64_t>>{7001021}));
  EXPECT_EQ(SeedsOf(second), (std::vector<std::optional<std::uint64_t>>{7002021}));
}

TEST_F(OrchestratorTest, ASeedForAProviderWithoutOneIsNoted) {
  ScriptedBackend anthropic("claude-test", "anthropic");
  anthropic.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  RunConfig options = Options(1);
  options.seed = 7;
  options.seed_given = true;
  auto summary = RunWith(&anthropic, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_NE(std::find(summary->notes.begin(), summary->notes.end(),
                      "--seed: the anthropic API has no seed parameter; the programmer's requests "
                      "record their seeds but are sent without them"),
            summary->notes.end())
      << DumpJson(Json(summary->notes));
  // Without --seed there is nothing to say.
  store_.reset();
  fs::remove_all(dir_ / "run");
  OpenStore();
  ScriptedBackend unseeded("claude-test", "anthropic");
  unseeded.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  auto plain = RunWith(&unseeded, Options(1));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  for (const std::string& note : plain->notes) EXPECT_EQ(note.find("--seed"), std::string::npos);
}

TEST_F(OrchestratorTest, AcceptsAChildOnlyWhenItsIntervalClearsItsParents) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.50 1.40 1.60", "a")},
                       {"b", FakeCandidate("correct 1.02 0.95 1.10", "b")}}));
  scripted.Push(Reply({{"c", FakeCandidate("correct 1.55 1.45 1.65", "c")},
                       {"d", FakeCandidate("correct 2.00 1.90 2.10", "d")}}));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(2), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const auto& nodes = orchestrator->nodes();
  EXPECT_EQ(nodes.at(1).verdict, "accepted");      // 1.4 > 1 (the reference)
  EXPECT_EQ(nodes.at(2).verdict, "not accepted");  // [0.95, 1.10] includes 1
  EXPECT_EQ(nodes.at(3).verdict, "not accepted");  // [1.45, 1.65] overlaps a's [1.40, 1.60]
  EXPECT_EQ(nodes.at(4).verdict, "accepted");      // 1.90 > 1.60
  EXPECT_NE(progress_[1].outcome.find("2.00x [1.90, 2.10] accepted"), std::string::npos);

  auto best = report::JudgeBest(orchestrator->tree());
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->node, 4);
  EXPECT_EQ(best->parent, 1);
  EXPECT_TRUE(best->clearly_faster);
}

// A noisy timing (an interval wider than half its estimate, or calls spread more than their
// median) is never accepted, however far above its parent, and its iteration line says so.
TEST_F(OrchestratorTest, ANoisyTimingIsNeverAcceptedAndSaysSo) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 3.00 1.40 4.60", "a")},
                       {"b", FakeCandidate("correct 2.00 1.90 2.10 2.87", "b")}}));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(1), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const auto& nodes = orchestrator->nodes();
  EXPECT_EQ(nodes.at(1).verdict, "not accepted");  // 1.40 > 1, but [1.40, 4.60] is noise
  EXPECT_TRUE(nodes.at(1).noisy_timing);
  EXPECT_EQ(nodes.at(2).verdict, "not accepted");  // disjoint, but its IQR is 287 %
  EXPECT_TRUE(nodes.at(2).noisy_timing);
  ASSERT_EQ(progress_.size(), 1u);
  EXPECT_EQ(progress_[0].outcome,
            "correct 3.00x [1.40, 4.60] noisy timing, correct 2.00x [1.90, 2.10] noisy timing");
  // Both lie above 1x, both noisy: the best is the surer one (the higher lower bound, 1.90), and
  // its words follow its interval, with the noise said.
  auto best = report::JudgeBest(orchestrator->tree(), &orchestrator->nodes());
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->node, 2);
  EXPECT_TRUE(best->noisy);
  EXPECT_TRUE(best->clearly_faster);
  EXPECT_NE(best->text.find("though its timing is noisy"), std::string::npos) << best->text;
}

TEST_F(OrchestratorTest, BestWithinItsParentsNoiseIsReportedAsSuch) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.50 1.40 1.60", "a")},
                       {"b", FakeCandidate("compile_error", "b")}}));
  scripted.Push(Reply({{"c", FakeCandidate("correct 1.55 1.45 1.65", "c")},
                       {"d", FakeCandidate("compile_error", "d")}}));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(2), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  auto best = report::JudgeBest(orchestrator->tree());
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->node, 3);
  EXPECT_FALSE(best->clearly_faster);
  EXPECT_NE(best->text.find("overlaps its parent n1"), std::string::npos) << best->text;

  report::RunReportInput input;
  input.config = orchestrator->config();
  input.summary = *summary;
  input.tree = &orchestrator->tree();
  input.nodes = &orchestrator->nodes();
  std::string report = report::RenderMarkdownReport(input);
  EXPECT_NE(report.find("overlaps its parent n1"), std::string::npos) << report;
  EXPECT_NE(report.find("| n3 | 2 | optimize | correct | 1.55x [1.45, 1.65] | not accepted"),
            std::string::npos)
      << report;
  std::string best_file = RenderBestKernel(input, "print('kernel')\n");
  EXPECT_NE(best_file.find("# speedup:   1.55x over the reference, 95% interval [1.45, 1.65]"),
            std::string::npos)
      << best_file;
  EXPECT_NE(best_file.find("# lineage:   ROOT -> n1 (initial, 1.50x) -> n3 (optimize, 1.55x)"),
            std::string::npos)
      << best_file;
}

// A program (docs/programs.md): the run's report names the timed baseline and the reference, and
// its speedups are over the program.
TEST_F(OrchestratorTest, AProgramsReportSaysWhatIsTimedAndWhatIsMatched) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.50 1.40 1.60", "a")}}));
  RunConfig options = Options(1);
  options.problem =
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/problems/program_scaled_add/problem.py";
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, options, &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  report::RunReportInput input;
  input.config = orchestrator->config();
  input.summary = *summary;
  input.tree = &orchestrator->tree();
  input.nodes = &orchestrator->nodes();
  const std::string md = report::RenderMarkdownReport(input);
  EXPECT_NE(md.find("- Baseline (timed): `" + options.problem + " (ENTRY scaled_add)`"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- Reference (expected outputs): `" + std::string(KERNELPRO_SOURCE_DIR) +
                    "/tests/problems/program_scaled_add/reference.py`"),
            std::string::npos);
  EXPECT_NE(md.find("**1.50x** over the baseline (the program), 95% interval"), std::string::npos);
  // The programmer was shown the program as the baseline to beat, with its reference.
  ASSERT_FALSE(scripted.Requests().empty());
  EXPECT_NE(scripted.Requests()[0].messages[0].text.find("## The program to beat"),
            std::string::npos);
}

TEST(RunReportTest, AKernelSlowerThanTheReferenceIsNeverTheBest) {
  Tree tree;
  CandidateOutcome slow;
  slow.status = eval::EvalStatus::kCorrect;
  slow.speedup = RatioInterval{0.5, 0.45, 0.55, 0.95};
  ASSERT_TRUE(tree.AddExpansion(Tree::kRootId, agents::PromptMode::kInitial, {slow}, {-0.69}).ok());
  EXPECT_FALSE(report::JudgeBest(tree).has_value());
  EXPECT_EQ(report::ReferenceStaysText(tree),
            "no kernel was shown faster than the reference: the fastest correct one, n1 (0.50x "
            "[0.45, 0.55]), does not have its whole interval above 1x, so the reference stays the "
            "answer");
}

TEST_F(OrchestratorTest, DebugPromptCarriesTheParentsCodeAndErrors) {
  ScriptedBackend scripted;
  scripted.Push(Reply(
      {{"a", FakeCandidate("compile_error", "a")}, {"b", FakeCandidate("incorrect 0.25", "b")}}));
  scripted.Push(Reply({{"fix", FakeCandidate("correct 1.10 1.05 1.15", "fix")}}));
  auto summary = RunWith(&scripted, Options(2));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(progress_.size(), 2u);
  EXPECT_EQ(progress_[1].mode, agents::PromptMode::kDebug);
  // Greedy repairs the node closest to working: the incorrect one (b).
  EXPECT_EQ(progress_[1].parent, 2);
  const llm::Request request = scripted.Requests()[1];
  const std::string& user = request.messages.front().text;
  EXPECT_NE(user.find("# b"), std::string::npos);
  EXPECT_NE(user.find("incorrect: outputs differ from the reference"), std::string::npos) << user;
}

TEST_F(OrchestratorTest, StageOneReachesTheProgrammerInTheInitialDebugAndOptimisePrompts) {
  // Paper §3.2.1: the reference analysis guides the programmer, not only the profiling agent.
  agents::BenchmarkingAgent stage1([](const std::string& problem) {
    roofline::ReferenceAnalysis a;
    a.problem = problem;
    a.bottleneck = roofline::Bottleneck::kMemory;
    a.confidence = "high";
    a.rationale = "ncu agrees with the roofline";
    return Result<roofline::ReferenceAnalysis>(a);
  });
  auto run = [&](const std::string& device) {
    ScriptedBackend scripted;
    scripted.Push(Reply(
        {{"a", FakeCandidate("compile_error", "a")}, {"b", FakeCandidate("incorrect 0.25", "b")}}));
    scripted.Push(Reply({{"fix", FakeCandidate("correct 1.10 1.05 1.15", "fix")}}));
    if (device == "cuda") scripted.Push(AnalysisReply("memory bound"));
    scripted.Push(Reply({{"faster", FakeCandidate("correct 1.30 1.25 1.35", "faster")}}));
    RunConfig options = Options(3);
    options.device = device;
    auto summary = RunWith(&scripted, options, nullptr, &stage1);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    std::vector<std::string> programmer;  // the user parts of the programmer's prompts
    for (const llm::Request& r : scripted.Requests()) {
      const std::string& user = r.messages.front().text;
      if (user.rfind("# Task:", 0) == 0) programmer.push_back(user);
    }
    store_.reset();
    fs::remove_all(dir_ / "run");
    OpenStore();
    return programmer;
  };
  const std::vector<std::string> cuda = run("cuda");
  ASSERT_EQ(cuda.size(), 3u);
  EXPECT_EQ(cuda[0].rfind("# Task: write", 0), 0u);
  EXPECT_EQ(cuda[1].rfind("# Task: fix", 0), 0u);
  EXPECT_NE(cuda[2].find("## The candidate to improve"), std::string::npos);
  for (const std::string& user : cuda) {
    EXPECT_NE(user.find("## What bounds this problem (Stage 1)"), std::string::npos) << user;
    EXPECT_NE(user.find("- Class: memory-bound, confidence high."), std::string::npos) << user;
    EXPECT_NE(user.find("- Why: Ncu agrees with the roofline."), std::string::npos) << user;
  }
  // A CPU target: no GPU roofline describes it, so no Stage-1 part.
  for (const std::string& user : run("cpu")) {
    EXPECT_EQ(user.find("(Stage 1)"), std::string::npos) << user;
  }
}

TEST_F(OrchestratorTest, AReplyWithoutCandidatesStillGrowsTheTree) {
  ScriptedBackend scripted;
  scripted.Push(TextResponse("I cannot help with that."));
  scripted.Push(Reply({{"ok", FakeCandidate("correct 1.10 1.05 1.15", "ok")}}));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(2), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const Tree& tree = orchestrator->tree();
  ASSERT_EQ(tree.size(), 3);
  // The LLM's failure, not a kernel's compile error: in the tree, the store and the iteration line.
  EXPECT_EQ(tree.node(1).status, eval::EvalStatus::kLlmError);
  EXPECT_TRUE(tree.node(1).llm_error());
  EXPECT_TRUE(tree.node(1).terminal);
  EXPECT_EQ(orchestrator->nodes().at(1).candidate_id, 0);
  EXPECT_TRUE(orchestrator->nodes().at(1).errors.starts_with("llm_error: "))
      << orchestrator->nodes().at(1).errors;
  auto rows = store_->ListNodes(1);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1].status, "llm_error");
  EXPECT_EQ((*rows)[1].kind, "llm_error");
  EXPECT_TRUE(progress_[0].outcome.starts_with("llm_error: ")) << progress_[0].outcome;
  EXPECT_NE(progress_[0].outcome.find("holds no candidate"), std::string::npos)
      << progress_[0].outcome;
  EXPECT_EQ(progress_[0].outcome.find("compile_error"), std::string::npos) << progress_[0].outcome;
  // There is no code to debug: the next iteration asks for fresh solutions again.
  EXPECT_EQ(progress_[1].mode, agents::PromptMode::kInitial);
  EXPECT_EQ(progress_[1].parent, Tree::kRootId);
  EXPECT_EQ(summary->stop, StopReason::kIterations);
}

// A permanent LLM error (here a spent cassette) stops the run at once with its message, records
// nothing for that iteration, and the run resumes there once the cause is fixed.
TEST_F(OrchestratorTest, AnExhaustedCassetteStopsTheRunWithItsMessage) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  scripted.Push(llm::MakeError(
      llm::ErrorKind::kReplayMiss,
      "cassette demo.jsonl: exhausted: all 1 recordings of stream 'text' were served already"));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(5), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->stop, StopReason::kLlmError);
  EXPECT_EQ(summary->stop_message,
            "the LLM call of iteration 2 failed and asking again cannot help: not in the "
            "cassette: cassette demo.jsonl: exhausted: all 1 recordings of stream 'text' were "
            "served already");
  EXPECT_EQ(scripted.calls(), 2);  // not one call per iteration left
  EXPECT_EQ(summary->iterations_done, 1);
  EXPECT_EQ(orchestrator->tree().size(), 2);  // no node for the failed iteration
  ASSERT_TRUE(summary->best.has_value());
  auto run = store_->GetRun(1);
  EXPECT_EQ(run->status, store::RunStatus::kFinished);
  EXPECT_NE(run->status_message.find("llm_error: the LLM call of iteration 2"), std::string::npos)
      << run->status_message;
  ASSERT_EQ(progress_.size(), 1u);

  // Resumed with a model that answers: iteration 2 is asked again and the run goes on.
  ScriptedBackend fixed;
  fixed.Push(Reply({{"b", FakeCandidate("correct 1.50 1.40 1.60", "b")}}));
  auto resumed = RunWith(&fixed, Options(2), &orchestrator);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(fixed.calls(), 1);
  EXPECT_EQ(resumed->stop, StopReason::kIterations);
  EXPECT_EQ(resumed->iterations_done, 2);
  EXPECT_EQ(orchestrator->tree().size(), 3);
  EXPECT_DOUBLE_EQ(orchestrator->tree().node(*resumed->best).speedup->estimate, 1.5);
}

TEST_F(OrchestratorTest, RefusedCredentialsOrAnUnknownModelStopTheRunAtOnce) {
  ScriptedBackend scripted;
  scripted.Push(llm::MakeError(llm::ErrorKind::kAuth, "invalid x-api-key", 401));
  auto summary = RunWith(&scripted, Options(5));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->stop, StopReason::kLlmError);
  EXPECT_NE(summary->stop_message.find("not authorised (HTTP 401): invalid x-api-key"),
            std::string::npos)
      << summary->stop_message;
  EXPECT_EQ(summary->iterations_done, 0);
  EXPECT_EQ(scripted.calls(), 1);
  EXPECT_FALSE(summary->best.has_value());

  ScriptedBackend unknown;
  unknown.Push(llm::MakeError(llm::ErrorKind::kBadRequest, "model gpt-9 does not exist", 404));
  auto again = RunWith(&unknown, Options(5));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->stop, StopReason::kLlmError);
  EXPECT_NE(again->stop_message.find("(HTTP 404): model gpt-9 does not exist"), std::string::npos)
      << again->stop_message;
  EXPECT_EQ(unknown.calls(), 1);
}

// A transient error (a 500 after the client's retries) costs an iteration, not the run.
TEST_F(OrchestratorTest, AServerErrorMakesAnLlmErrorNodeAndTheRunGoesOn) {
  ScriptedBackend scripted;
  scripted.Push(llm::MakeError(llm::ErrorKind::kServer, "upstream overloaded", 500));
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(2, "mcts"), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->stop, StopReason::kIterations);
  EXPECT_EQ(summary->iterations_done, 2);
  const Tree& tree = orchestrator->tree();
  ASSERT_EQ(tree.size(), 3);
  EXPECT_TRUE(tree.node(1).llm_error());
  EXPECT_EQ(tree.node(1).visits, 0);
  EXPECT_EQ(tree.root().visits, 1);  // only the evaluated candidate
  EXPECT_TRUE(tree.node(2).correct());
  ASSERT_EQ(progress_.size(), 2u);
  EXPECT_EQ(progress_[0].outcome, "llm_error: server error (HTTP 500): upstream overloaded");
  EXPECT_EQ(progress_[1].mode, agents::PromptMode::kInitial);  // the same choice, retried
  EXPECT_EQ(evaluator_.evaluated.size(), 1u);
  EXPECT_EQ(CountSteps("record"), 2);
}

TEST_F(OrchestratorTest, ThreeLlmErrorsInARowStopTheRun) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("compile_error", "a")}}));
  scripted.Push(llm::MakeError(llm::ErrorKind::kServer, "first", 503));
  scripted.Push(Reply({{"b", FakeCandidate("compile_error", "b")}}));  // the count starts again
  scripted.Push(llm::MakeError(llm::ErrorKind::kServer, "second", 503));
  scripted.Push(llm::MakeError(llm::ErrorKind::kTimeout, "third"));
  scripted.Push(llm::MakeError(llm::ErrorKind::kRateLimited, "fourth", 429));
  scripted.Push(Reply({{"never", FakeCandidate("correct 2 2 2", "never")}}));
  auto summary = RunWith(&scripted, Options(10));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->stop, StopReason::kLlmError);
  EXPECT_EQ(summary->stop_message,
            "the model failed 3 iterations in a row: rate limited (HTTP 429): fourth");
  EXPECT_EQ(summary->iterations_done, 6);
  EXPECT_EQ(scripted.calls(), 6);
  EXPECT_FALSE(summary->best.has_value());
  EXPECT_EQ(store_->GetRun(1)->status, store::RunStatus::kFinished);
}

TEST_F(OrchestratorTest, ARejectedCandidateIsACompileErrorWithoutABuild) {
  ScriptedBackend scripted;
  std::string broken = FakeCandidate("correct 9 9 9", "x");
  broken.replace(broken.find("class ModelNew(nn.Module):"), 26, "class ModelNew(nn.Module)");
  scripted.Push(Reply({{"broken", broken}}));
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, Options(1), &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(orchestrator->tree().node(1).status, eval::EvalStatus::kCompileError);
  EXPECT_TRUE(evaluator_.evaluated.empty());
  EXPECT_NE(orchestrator->nodes().at(1).errors.find("syntax error"), std::string::npos)
      << orchestrator->nodes().at(1).errors;
  auto evaluation = store_->LatestEvaluation(orchestrator->nodes().at(1).candidate_id);
  ASSERT_TRUE(evaluation.ok() && evaluation->has_value());
  EXPECT_EQ((*evaluation)->status, "compile_error");
}

TEST_F(OrchestratorTest, ProfilesCorrectCandidatesOnCudaAndFeedsTheAnalysisForward) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.50 1.40 1.60", "a")},
                       {"b", FakeCandidate("compile_error", "b")}}));
  scripted.Push(AnalysisReply("memory bound: loads are scalar"));
  scripted.Push(Reply({{"c", FakeCandidate("compile_error", "c")}}));
  RunConfig options = Options(2);
  options.device = "cuda";
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, options, &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(evaluator_.profiled.size(), 1u);
  ASSERT_EQ(scripted.calls(), 3);
  EXPECT_NE(orchestrator->nodes().at(1).feedback.find("loads are scalar"), std::string::npos);
  // The optimise prompt of iteration 2 carries the analysis.
  EXPECT_NE(scripted.Requests()[2].messages.front().text.find("loads are scalar"),
            std::string::npos);
  auto exchanges = store_->ListLlmExchanges(1);
  ASSERT_EQ(exchanges->size(), 3u);
  EXPECT_EQ((*exchanges)[1].purpose, "profiling");
  EXPECT_EQ((*exchanges)[1].step_key, "profile/candidate:1");
  const std::int64_t a = orchestrator->nodes().at(1).candidate_id;
  auto analysis = store_->LatestProfileAnalysis(a);
  ASSERT_TRUE(analysis.ok() && analysis->has_value());
  EXPECT_EQ((*analysis)->bottleneck, "memory");
  EXPECT_TRUE(store_->LatestMetrics(a)->has_value());
  EXPECT_TRUE(store_->LatestToolOutput(a)->has_value());
}

TEST_F(OrchestratorTest, WithSeveralGpusTheChildrenAreProfiledAtOnceAndRecordedInOrder) {
  ScriptedBackend scripted;
  scripted.Push(Reply({{"a", FakeCandidate("correct 1.50 1.40 1.60", "a")},
                       {"b", FakeCandidate("correct 1.20 1.10 1.30", "b")}}));
  scripted.Push(AnalysisReply("first child: loads are scalar"));
  scripted.Push(AnalysisReply("second child: too few blocks"));
  RunConfig options = Options(1);
  options.device = "cuda";
  options.gpus = 2;
  evaluator_.rendezvous = 2;  // each Profile call waits for the other: they must overlap
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, options, &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(evaluator_.profiled.size(), 2u);
  EXPECT_EQ(evaluator_.most_in_flight, 2);
  // The analyses, their LLM calls and the stored rows follow child order, as with one GPU.
  EXPECT_NE(orchestrator->nodes().at(1).feedback.find("loads are scalar"), std::string::npos);
  EXPECT_NE(orchestrator->nodes().at(2).feedback.find("too few blocks"), std::string::npos);
  auto exchanges = store_->ListLlmExchanges(1);
  ASSERT_EQ(exchanges->size(), 3u);
  EXPECT_EQ((*exchanges)[1].step_key, "profile/candidate:1");
  EXPECT_EQ((*exchanges)[2].step_key, "profile/candidate:2");
  EXPECT_EQ(CountSteps("profile"), 2);
  for (int node : {1, 2}) {
    const std::int64_t id = orchestrator->nodes().at(node).candidate_id;
    EXPECT_TRUE(store_->LatestMetrics(id)->has_value()) << node;
    auto step = store_->GetStep({1, 1, "profile", "candidate:" + std::to_string(id)});
    ASSERT_TRUE(step.ok() && step->has_value());
    EXPECT_EQ((*step)->attempts, 1) << "started once, before the concurrent profiles";
  }
}

TEST_F(OrchestratorTest, ResumesAfterAFailedEvaluationWithoutAskingTheModelAgain) {
  ScriptedBackend first;
  first.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")},
                    {"b", FakeCandidate("compile_error", "b")}}));
  first.Push(Reply({{"c", FakeCandidate("correct 1.60 1.50 1.70", "c")}}));
  auto summary = RunWith(&first, Options(1));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const int calls_before = first.calls();
  // Iteration 2's evaluation cannot run: the run stops with its generation stored.
  evaluator_.fail_next_evaluate = true;
  auto failed = RunWith(&first, Options(2));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(store_->GetRun(1)->status, store::RunStatus::kFailed);
  EXPECT_EQ(first.calls(), calls_before + 1);

  // Resume: the generation of iteration 2 is done; nothing is asked again.
  ScriptedBackend second;
  std::unique_ptr<Orchestrator> orchestrator;
  auto resumed = RunWith(&second, Options(2), &orchestrator);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(second.calls(), 0);
  EXPECT_EQ(resumed->iterations_done, 2);
  EXPECT_EQ(orchestrator->tree().size(), 4);
  EXPECT_EQ(CountSteps("record"), 2);
  EXPECT_EQ(store_->ListLlmExchanges(1)->size(), 2u);
  EXPECT_EQ(store_->GetRun(1)->status, store::RunStatus::kFinished);
  // The resumed run rebuilt the node information too (the verdict of iteration 1's seed).
  EXPECT_EQ(orchestrator->nodes().at(1).verdict, "accepted");
}

TEST_F(OrchestratorTest, ARedoneGenerationReusesTheStoredReply) {
  // The reply arrives and is stored, then the step cannot be recorded (the candidates directory
  // is a file): the run fails after paying for the reply.
  std::ofstream(dir_ / "run" / "candidates") << "in the way";
  ScriptedBackend first;
  first.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  auto failed = RunWith(&first, Options(1));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(first.calls(), 1);
  ASSERT_EQ(store_->ListLlmExchanges(1)->size(), 1u);

  fs::remove(dir_ / "run" / "candidates");
  ScriptedBackend second;  // empty: any call would fail
  std::unique_ptr<Orchestrator> orchestrator;
  auto resumed = RunWith(&second, Options(1), &orchestrator);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(second.calls(), 0);
  EXPECT_EQ(store_->ListLlmExchanges(1)->size(), 1u);
  EXPECT_EQ(orchestrator->tree().node(1).status, eval::EvalStatus::kCorrect);
  auto generate = store_->GetStep({1, 1, "generate", ""});
  ASSERT_TRUE(generate.ok() && generate->has_value());
  EXPECT_EQ((*generate)->attempts, 2);
  EXPECT_EQ(JsonGet<int>((*generate)->payload, "reused_replies", -1), 1);
}

// Programmer replies from a queue, memory notes for every extraction request, whatever order the
// extractor's thread and the orchestrator call in.
class RoutingBackend : public llm::Backend {
 public:
  std::string provider() const override { return "routing"; }
  std::string model() const override { return "routing-model"; }
  llm::Outcome Complete(const llm::Request& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (request.response_schema && request.response_schema->name == "candidates") {
      return programmer.Complete(request);
    }
    ++memory_calls;
    if (fail_memory) return llm::MakeError(llm::ErrorKind::kServer, "memory model down");
    const std::string& text = request.messages.front().text;
    return TextResponse(DumpJson(
        Json{{"learnings", Json::array({"note from " + text.substr(0, text.find(' ', 10))})}}));
  }
  ScriptedBackend programmer;
  int memory_calls = 0;
  bool fail_memory = false;

 private:
  std::mutex mu_;
};

TEST_F(OrchestratorTest, MemoryIsExtractedPerIterationAndResubmittedOnResume) {
  auto routing = std::make_shared<RoutingBackend>();
  routing->programmer.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  routing->programmer.Push(Reply({{"b", FakeCandidate("correct 1.30 1.20 1.40", "b")}}));
  routing->fail_memory = true;  // iteration 1's extraction fails: nothing learnt, nothing answered
  RunConfig options = Options(1);
  options.memory = true;
  auto run = [&](RunConfig o) { return RunShared(routing, std::move(o)); };
  ASSERT_TRUE(run(options).ok());
  EXPECT_EQ(routing->memory_calls, 1);

  // Resumed with a working memory model and one more iteration: iteration 1's record is
  // extracted again, iteration 2's too; both land in memory.jsonl.
  routing->fail_memory = false;
  options.iterations = 2;
  ASSERT_TRUE(run(options).ok());
  EXPECT_EQ(routing->memory_calls, 3);
  auto exchanges = store_->ListLlmExchanges(1);
  ASSERT_TRUE(exchanges.ok());
  std::vector<int> answered;
  for (const store::LlmExchangeRecord& e : *exchanges) {
    if (e.purpose == "memory" && e.response) answered.push_back(e.iteration);
    if (e.purpose == "memory") {
      EXPECT_EQ(e.step_key, "memory");
    }
  }
  std::sort(answered.begin(), answered.end());
  EXPECT_EQ(answered, (std::vector<int>{1, 2}));
  std::ifstream in(dir_ / "run" / "memory.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 2);
}

// Paper §3.4: the extractor sees every child, so a failed child's lesson reaches later prompts,
// not only what the best child did.
class LessonBackend : public llm::Backend {
 public:
  std::string provider() const override { return "lesson"; }
  std::string model() const override { return "lesson-model"; }
  llm::Outcome Complete(const llm::Request& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (request.response_schema && request.response_schema->name == "candidates") {
      return programmer.Complete(request);
    }
    extraction_requests.push_back(request.messages.front().text);
    // A note only from what the failed child showed: its verdict and its compiler error.
    const std::string& text = extraction_requests.back();
    Json notes = Json::array();
    if (text.find("(n1): compile_error") != std::string::npos &&
        text.find("expected ';' before '}' token") != std::string::npos) {
      notes.push_back("n1 failed to build: a missing ';' before '}' in main.cpp line 3.");
    }
    return TextResponse(DumpJson(Json{{"errors_and_corrections", notes}}));
  }
  ScriptedBackend programmer;
  std::vector<std::string> extraction_requests;

 private:
  std::mutex mu_;
};

TEST_F(OrchestratorTest, AFailedChildsLessonReachesTheNextPrompt) {
  auto backend = std::make_shared<LessonBackend>();
  // The failed child comes first and the correct one is the iteration's best.
  backend->programmer.Push(Reply({{"a", FakeCandidate("compile_error", "a")},
                                  {"b", FakeCandidate("correct 1.20 1.10 1.30", "b")}}));
  backend->programmer.Push(Reply({{"c", FakeCandidate("correct 1.30 1.20 1.40", "c")}}));
  RunConfig options = Options(1);
  options.memory = true;
  ASSERT_TRUE(RunShared(backend, options).ok());
  ASSERT_EQ(backend->extraction_requests.size(), 1u);
  const std::string& shown = backend->extraction_requests[0];
  EXPECT_NE(shown.find("## Candidate 2 of 2 (n2): correct 1.20x"), std::string::npos) << shown;
  // Iteration 2 (the memory drained at the end of iteration 1's process, as on resume).
  options.iterations = 2;
  ASSERT_TRUE(RunShared(backend, options).ok());
  const std::vector<llm::Request> requests = backend->programmer.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].system.find("missing ';'"), std::string::npos);
  EXPECT_NE(requests[1].system.find("n1 failed to build: a missing ';' before '}' in main.cpp"),
            std::string::npos)
      << requests[1].system;
}

// CUTLASS (issue 18): the programmer calls the code-search tools before it answers; the calls
// are kept in the generate step, fed to the search memory and shown in the report; the prompt
// carries the constraints, and a candidate breaking one is rejected without a build.
std::string CuteFakeCandidate(const std::string& verdict, const std::string& tag,
                              const std::string& flags) {
  std::string code = FakeCandidate(verdict, tag);
  code.replace(code.find("_CU = r\"\"\""), 10,
               "_CU = r\"\"\"\n#include <cute/tensor.hpp>\n"
               "using Atom = cute::SM90_64x128x16_F32BF16BF16_SS;\n");
  if (!flags.empty()) {
    const std::string call_end = "functions=[\"f\"])";
    code.replace(code.find(call_end), call_end.size(),
                 "functions=[\"f\"], extra_cuda_cflags=[" + flags + "])");
  }
  return code;
}

// The CUTLASS kit over the fixture tree (tests/fixtures/cutlass_tree).
Result<std::unique_ptr<agents::CutlassKit>> FixtureCutlassKit() {
  auto tree = cutlass::CutlassTreeAt(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/cutlass_tree", "test");
  if (!tree.ok()) return tree.status();
  return agents::CutlassKit::Load(*tree);
}

TEST_F(OrchestratorTest, WithCutlassTheProgrammersSearchesAreKeptRememberedAndReported) {
  auto kit = FixtureCutlassKit();
  ASSERT_TRUE(kit.ok()) << kit.status().ToString();

  auto routing = std::make_shared<RoutingBackend>();
  routing->programmer.Push(
      llm::testing::ToolUseResponse({{"c1", "search_cutlass", {{"regex", "SM90_64x128x16"}}}}));
  routing->programmer.Push(llm::testing::ToolUseResponse(
      {{"c2",
        "read_cutlass_file",
        {{"file", "cute/atom/mma_atom.hpp"}, {"start_line", 1}, {"end_line", 8}}}}));
  routing->programmer.Push(
      Reply({{"cute, flags from the build", CuteFakeCandidate("correct 1.50 1.40 1.60", "g", "")},
             {"cute with sm_90", CuteFakeCandidate("correct 9 9 9", "b", "'-arch=sm_90'")}}));

  RunConfig options = Options(1);
  options.memory = true;
  options.cutlass_dir = (*kit)->tree().root;
  std::map<int, NodeInfo> nodes;
  auto summary = RunShared(routing, options, kit->get(), &nodes);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();

  // Three turns of one conversation, all stored as exchanges of the generate step; the prompt
  // carried the constraints and the tools with their budget.
  const std::vector<llm::Request> asked = routing->programmer.Requests();
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_NE(asked[0].system.find("# Non-negotiable constraints"), std::string::npos);
  EXPECT_EQ(asked[0].tools.size(), 4u);
  EXPECT_NE(asked[0].messages.back().text.find("At most 6 searches"), std::string::npos);
  int programmer_exchanges = 0;
  auto exchanges = store_->ListLlmExchanges(1);
  ASSERT_TRUE(exchanges.ok());
  for (const store::LlmExchangeRecord& e : *exchanges) {
    if (e.purpose == "programmer") ++programmer_exchanges;
  }
  EXPECT_EQ(programmer_exchanges, 3);

  // The candidate with plain sm_90 flags never reached the evaluator.
  EXPECT_EQ(evaluator_.evaluated.size(), 1u);
  bool rejected = false;
  for (const auto& [id, info] : nodes) {
    if (info.strategy != "cute with sm_90") continue;
    rejected = true;
    EXPECT_NE(info.errors.find("[build.sm90a]"), std::string::npos) << info.errors;
  }
  EXPECT_TRUE(rejected);

  // The calls, from the run store.
  Journal journal(*store_, 1);
  auto calls = ReadProgrammerToolCalls(journal, 1);
  ASSERT_TRUE(calls.ok()) << calls.status().ToString();
  ASSERT_EQ((*calls)[1].size(), 2u);
  EXPECT_EQ((*calls)[1][0].name, "search_cutlass");
  EXPECT_NE((*calls)[1][0].result.find("cute/atom/mma_atom.hpp:6:"), std::string::npos);

  // The search memory keeps the file read and what the search found.
  std::ifstream in(dir_ / "run" / "memory.jsonl");
  std::stringstream memory;
  memory << in.rdbuf();
  EXPECT_NE(memory.str().find(R"("section":"key_files","text":"cute/atom/mma_atom.hpp (lines 1-8)"),
            std::string::npos)
      << memory.str();
  EXPECT_NE(memory.str().find(R"("section":"search_findings")"), std::string::npos);

  // The report lists the calls.
  auto stored = report::ReadStoredRun(*store_, (dir_ / "run").string());
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  const std::string markdown = report::RenderMarkdownReport((*stored)->input);
  EXPECT_NE(markdown.find("## The programmer's tool calls"), std::string::npos);
  EXPECT_NE(markdown.find("- iteration 1: `search_cutlass(regex=SM90_64x128x16) → 1 matching line"),
            std::string::npos)
      << markdown;
  EXPECT_NE(report::RenderHtmlReport((*stored)->input).find("read_cutlass_file(end_line=8"),
            std::string::npos);
}

TEST_F(OrchestratorTest, ABackendRefusingTheCutlassToolsIsAskedWithoutThemFromThenOn) {
  auto kit = FixtureCutlassKit();
  ASSERT_TRUE(kit.ok()) << kit.status().ToString();
  auto routing = std::make_shared<RoutingBackend>();
  routing->programmer.Push(
      llm::MakeError(llm::ErrorKind::kBadRequest, "openai: 'tools' is not supported", 400));
  routing->programmer.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
  routing->programmer.Push(Reply({{"b", FakeCandidate("correct 1.30 1.20 1.40", "b")}}));
  RunConfig options = Options(2);
  options.cutlass_dir = (*kit)->tree().root;
  auto summary = RunShared(routing, options, kit->get());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const std::vector<llm::Request> asked = routing->programmer.Requests();
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[0].tools.size(), 4u);
  EXPECT_TRUE(asked[1].tools.empty());  // the same iteration, once more without tools
  EXPECT_TRUE(asked[2].tools.empty());  // and iteration 2 does not try again
  bool said = false;
  for (const std::string& note : summary->notes) {
    said = said || (note.find("CUTLASS tools: the backend refused the request with tools") !=
                        std::string::npos &&
                    note.find("the rest of the run asks without them") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

TEST_F(OrchestratorTest, ASourceSeenBeforeKeepsItsVerdictWithoutASecondEvaluation) {
  ScriptedBackend scripted;
  const std::string a = FakeCandidate("correct 1.50 1.40 1.60", "a");
  scripted.Push(Reply({{"a", a}}));
  scripted.Push(AnalysisReply("scalar loads"));
  scripted.Push(Reply({{"a again", a}, {"b", FakeCandidate("compile_error", "b")}}));
  RunConfig options = Options(2);
  options.device = "cuda";
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, options, &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  // Built and timed once, profiled once; the repeat is a node with the same verdict.
  EXPECT_EQ(evaluator_.evaluated.size(), 2u);
  EXPECT_EQ(evaluator_.profiled.size(), 1u);
  EXPECT_EQ(scripted.calls(), 3);
  const Tree& tree = orchestrator->tree();
  ASSERT_EQ(tree.size(), 4);
  EXPECT_EQ(tree.node(2).candidate, tree.node(1).candidate);
  EXPECT_DOUBLE_EQ(tree.node(2).speedup->estimate, 1.5);
  EXPECT_EQ(orchestrator->nodes().at(2).verdict, "not accepted");  // the same interval
  EXPECT_NE(orchestrator->nodes().at(2).feedback.find("scalar loads"), std::string::npos);
  auto evaluation = store_->LatestEvaluation(orchestrator->nodes().at(1).candidate_id);
  ASSERT_TRUE(evaluation.ok() && evaluation->has_value());
  EXPECT_EQ((*evaluation)->id, 1);
  auto candidates_step = store_->GetStep({1, 2, "evaluate", "candidate:1"});
  ASSERT_TRUE(candidates_step.ok() && candidates_step->has_value());
  EXPECT_TRUE(JsonGet<bool>((*candidates_step)->payload, "reused", false));
}

TEST_F(OrchestratorTest, StopsAtTheCostLimitAndTheTimeLimit) {
  ScriptedBackend scripted;
  RunConfig options = Options(5);
  options.time_limit_s = 0;
  auto summary = RunWith(&scripted, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->stop, StopReason::kTimeLimit);
  EXPECT_EQ(summary->iterations_done, 0);
  EXPECT_EQ(scripted.calls(), 0);

  // An exchange that already cost more than the limit (stored by an earlier process).
  store::LlmExchangeRecord paid;
  paid.run_id = 1;
  paid.purpose = "programmer";
  paid.cost_usd = 2.5;
  paid.cost_known = true;
  ASSERT_TRUE(store_->AddLlmExchange(paid).ok());
  options.time_limit_s.reset();
  options.max_cost_usd = 2.0;
  summary = RunWith(&scripted, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->stop, StopReason::kCost);
  EXPECT_NE(summary->stop_message.find("$2.5000"), std::string::npos) << summary->stop_message;
  EXPECT_EQ(scripted.calls(), 0);
  EXPECT_EQ(store_->GetRun(1)->status_message.rfind("cost:", 0), 0u);
}

// ---- --energy (docs/energy.md)

// Stage 1 of the energy tests: a memory-bound reference whose ncu profile gave a proxy of
// 1,000,000 pJ.
agents::BenchmarkingAgent ReferenceWithEnergy() {
  return agents::BenchmarkingAgent([](const std::string& problem) {
    roofline::ReferenceAnalysis a;
    a.problem = problem;
    a.bottleneck = roofline::Bottleneck::kMemory;
    a.energy_proxy_pj = 1e6;
    return Result<roofline::ReferenceAnalysis>(a);
  });
}

// Two equally fast seeds, the first (n1) executing 4x the instructions of the second (n2), then
// one optimise iteration from whichever the search picks.
void PushEqualSpeedSeeds(ScriptedBackend& scripted) {
  scripted.Push(Reply({{"wasteful", FakeCandidate("correct 1.50 1.40 1.60", "instructions: 4000")},
                       {"frugal", FakeCandidate("correct 1.50 1.40 1.60", "instructions: 1000")}}));
  scripted.Push(AnalysisReply("memory bound"));
  scripted.Push(AnalysisReply("memory bound"));
  scripted.Push(Reply({{"c", FakeCandidate("compile_error", "c")}}));
}

struct EnergyRun {
  std::string tree;  // DumpJson(ToJson(tree))
  std::vector<std::string> prompts;
  std::map<int, NodeInfo> nodes;
  std::string report;
  std::vector<std::string> notes;
};

TEST_F(OrchestratorTest, MeasureRecordsTheProxyAndLeavesTheSearchByteIdenticalToOff) {
  auto run = [&](EnergyMode mode) {
    ScriptedBackend scripted;
    PushEqualSpeedSeeds(scripted);
    RunConfig options = Options(2, "mcts");
    options.device = "cuda";
    options.energy = mode;
    agents::BenchmarkingAgent stage1 = ReferenceWithEnergy();
    std::unique_ptr<Orchestrator> orchestrator;
    auto summary = RunWith(&scripted, options, &orchestrator, &stage1);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    EnergyRun out;
    out.tree = DumpJson(ToJson(orchestrator->tree()));
    for (const llm::Request& r : scripted.Requests()) {
      std::string text = r.system + "\n";
      for (const llm::Message& m : r.messages) text += m.text + "\n";
      out.prompts.push_back(text);
    }
    out.nodes = orchestrator->nodes();
    out.notes = summary->notes;
    auto stored = report::ReadStoredRun(*store_, options.run_dir);
    EXPECT_TRUE(stored.ok());
    out.report = report::RenderMarkdownReport((*stored)->input);
    store_.reset();
    fs::remove_all(dir_ / "run");
    OpenStore();
    return out;
  };
  const EnergyRun off = run(EnergyMode::kOff);
  const EnergyRun measure = run(EnergyMode::kMeasure);
  EXPECT_EQ(measure.tree, off.tree);
  EXPECT_EQ(measure.prompts, off.prompts)
      << "measure changes no prompt, the profiling agent's included";
  // Off records nothing of energy; measure records each correct child's proxy and reduction:
  // 20 pJ/B x 1000 B + 3 pJ x instructions.
  EXPECT_FALSE(off.nodes.at(1).energy_proxy_pj);
  EXPECT_EQ(off.report.find("## Energy"), std::string::npos);
  ASSERT_TRUE(measure.nodes.at(1).energy_proxy_pj);
  EXPECT_DOUBLE_EQ(*measure.nodes.at(1).energy_proxy_pj, 20000 + 12000);
  EXPECT_DOUBLE_EQ(*measure.nodes.at(2).energy_proxy_pj, 20000 + 3000);
  EXPECT_DOUBLE_EQ(*measure.nodes.at(2).energy_reduction, 1e6 / 23000);
  EXPECT_FALSE(measure.nodes.at(3).energy_proxy_pj) << "a compile error has no profile";
  EXPECT_NE(measure.report.find("## Energy\n"), std::string::npos) << measure.report;
  EXPECT_NE(measure.report.find("Reference: 1e+06 pJ"), std::string::npos) << measure.report;
  EXPECT_NE(measure.report.find("| n2 | 1.50x [1.40, 1.60] | 2.3e+04 | 2e+04 | 0 | 0 | 3000 | "
                                "43.48x |"),
            std::string::npos)
      << measure.report;
}

TEST_F(OrchestratorTest, AwareRewardsTheFrugalOfTwoEquallyFastKernelsAndAsksForIt) {
  ScriptedBackend scripted;
  PushEqualSpeedSeeds(scripted);
  RunConfig options = Options(2, "mcts");
  options.device = "cuda";
  options.energy = EnergyMode::kAware;
  agents::BenchmarkingAgent stage1 = ReferenceWithEnergy();
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, options, &orchestrator, &stage1);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const Tree& tree = orchestrator->tree();
  ASSERT_TRUE(tree.node(2).energy_reduction);
  EXPECT_DOUBLE_EQ(*tree.node(2).energy_reduction, 1e6 / 23000);
  EXPECT_GT(tree.node(2).reward, tree.node(1).reward) << "same speed: fewer instructions wins";
  EXPECT_NEAR(tree.node(2).reward - tree.node(1).reward,
              kDefaultEnergyEpsilon * std::log(32000.0 / 23000), 1e-12);
  EXPECT_EQ(tree.BestNode(), 2) << "the frugal one is the answer, though attached second";
  // The programmer is told of the preference; the default prompt is not.
  EXPECT_NE(scripted.Requests()[0].system.find("# Energy preferences"), std::string::npos);
}

TEST_F(OrchestratorTest, WithoutTheReferencesProxyMeasureSaysWhyThereIsNoReduction) {
  ScriptedBackend scripted;
  PushEqualSpeedSeeds(scripted);
  RunConfig options = Options(2, "mcts");
  options.device = "cuda";
  options.energy = EnergyMode::kMeasure;
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, options, &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_TRUE(orchestrator->nodes().at(1).energy_proxy_pj);
  EXPECT_FALSE(orchestrator->nodes().at(1).energy_reduction);
  EXPECT_NE(std::find(summary->notes.begin(), summary->notes.end(),
                      "energy: the reference's energy proxy is unknown (no ncu profile of the "
                      "reference (Stage 1)): candidates' proxies are recorded without an energy "
                      "reduction"),
            summary->notes.end());
}

// What the NVML energy step returns (eval/energy.h): the reference at 40 mJ per call, then one
// arm per candidate at the energies given, 5 windows each.
Json NvmlStep(const std::vector<double>& candidates_mj) {
  auto arm = [](const std::string& name, double mj) {
    Json windows = Json::array();
    for (double f : {1.0, 1.01, 0.99, 1.02, 0.98}) {
      windows.push_back({{"mj_per_call", mj * f}, {"watts", 400.0}, {"calls", 1000}});
    }
    return Json{{"name", name},
                {"label", name},
                {"warmup", {{"settled", true}, {"seconds", 4.0}}},
                {"windows", windows}};
  };
  Json arms = {arm("reference", 40)};
  for (std::size_t i = 0; i < candidates_mj.size(); ++i) {
    arms.push_back(arm("candidate" + std::to_string(i + 1), candidates_mj[i]));
  }
  const Json clocks = {
      {"sm_mhz", 1980}, {"mem_mhz", 3201}, {"power_limit_w", 700.0}, {"temperature_c", 40}};
  return {{"status", "ok"},
          {"window_s", 2.0},
          {"windows", 5},
          {"idle", {{"watts", 120.0}}},
          {"before", clocks},
          {"after", clocks},
          {"device", {{"name", "NVIDIA H200"}}},
          {"arms", arms}};
}

TEST_F(OrchestratorTest, AfterTheSearchNvmlMeasuresTheFastestKernelsOnceAndTheReportShowsIt) {
  std::vector<std::vector<std::string>> measured;
  measure_energy_ = [&](const std::vector<std::string>& files,
                        const RunConfig& config) -> Result<Json> {
    measured.push_back(files);
    EXPECT_EQ(config.energy_windows, 5);
    return NvmlStep({20, 15});
  };
  ScriptedBackend scripted;
  PushEqualSpeedSeeds(scripted);
  RunConfig options = Options(2, "mcts");
  options.energy = EnergyMode::kMeasure;
  options.energy_windows = 5;
  auto summary = RunWith(&scripted, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  // The two correct kernels (equally fast: the earlier first); the compile error is not measured.
  ASSERT_EQ(measured.size(), 1u);
  ASSERT_EQ(measured[0].size(), 2u);
  EXPECT_EQ(measured[0][0], (dir_ / "run" / "candidates" / "0001.py").string());
  EXPECT_EQ(measured[0][1], (dir_ / "run" / "candidates" / "0002.py").string());
  ASSERT_TRUE(summary->energy);
  EXPECT_EQ(summary->energy->nodes, (std::vector<int>{1, 2}));

  // The report, rendered again from the store, shows the measurement and what it means.
  auto stored = report::ReadStoredRun(*store_, options.run_dir);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  const std::string md = report::RenderMarkdownReport((*stored)->input);
  EXPECT_NE(md.find("### Measured with NVML\n"), std::string::npos) << md;
  EXPECT_NE(md.find("NVML total energy counter, 5 windows of 2.0 s, idle 120.0 W subtracted"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| reference | - | 40 | [39.2, 40.8] 93.8% | 400.0 W | - |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| n2 | 1.50x [1.40, 1.60] | 15 | [14.7, 15.3] 93.8% | 400.0 W | 2.67x ["),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- n2 spends less energy per call than n1 (1.33x, beyond the noise"),
            std::string::npos)
      << md;
  const std::string html = report::RenderHtmlReport((*stored)->input);
  EXPECT_NE(html.find("<h3>Measured with NVML</h3>"), std::string::npos);

  // Resumed with nothing left to do, the run keeps its measurement: NVML is not asked again.
  store_.reset();
  OpenStore();
  ScriptedBackend none;
  auto again = RunWith(&none, options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(measured.size(), 1u);
  ASSERT_TRUE(again->energy);
  EXPECT_EQ(again->energy->step, summary->energy->step);
}

TEST_F(OrchestratorTest, NvmlThatCannotMeasureIsANoteAndOffNeverAsks) {
  int asked = 0;
  measure_energy_ = [&](const std::vector<std::string>&, const RunConfig&) -> Result<Json> {
    ++asked;
    return Status::Unavailable("nvmlInit_v2 failed: NVML error 9 (Driver Not Loaded)");
  };
  {
    ScriptedBackend scripted;
    PushEqualSpeedSeeds(scripted);
    RunConfig options = Options(2, "mcts");
    options.energy = EnergyMode::kMeasure;
    auto summary = RunWith(&scripted, options);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    EXPECT_EQ(asked, 1);
    EXPECT_FALSE(summary->energy);
    EXPECT_NE(std::find(summary->notes.begin(), summary->notes.end(),
                        "energy (NVML): not measured: nvmlInit_v2 failed: NVML error 9 (Driver "
                        "Not Loaded)"),
              summary->notes.end());
    auto stored_energy = LatestMeasuredEnergy(*store_, 1);
    ASSERT_TRUE(stored_energy.ok());
    EXPECT_FALSE(*stored_energy) << "nothing is journaled for a measurement that failed";
  }
  store_.reset();
  fs::remove_all(dir_ / "run");
  OpenStore();
  ScriptedBackend scripted;
  PushEqualSpeedSeeds(scripted);
  auto off = RunWith(&scripted, Options(2, "mcts"));
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(asked, 1) << "--energy off measures nothing";
  EXPECT_FALSE(off->energy);
}

TEST_F(OrchestratorTest, MctsRunIsDeterministic) {
  auto run = [&](const std::string& name) {
    ScriptedBackend scripted;
    for (int i = 0; i < 4; ++i) {
      scripted.Push(Reply({{"x" + std::to_string(i),
                            FakeCandidate(i % 2 ? "compile_error" : "correct 1.30 1.20 1.40",
                                          name + std::to_string(i))},
                           {"y" + std::to_string(i),
                            FakeCandidate("correct 1." + std::to_string(i + 1) + " 1.0 1.9",
                                          name + "y" + std::to_string(i))}}));
    }
    std::unique_ptr<Orchestrator> orchestrator;
    auto summary = RunWith(&scripted, Options(4, "mcts"), &orchestrator);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    std::vector<int> parents;
    for (const IterationProgress& p : progress_) parents.push_back(p.parent);
    progress_.clear();
    store_.reset();
    fs::remove_all(dir_ / "run");
    OpenStore();
    return parents;
  };
  EXPECT_EQ(run("p"), run("p"));
}

TEST_F(OrchestratorTest, TheTemperaturesReachTheProgrammersRequests) {
  // One temperature: every request carries it.
  {
    ScriptedBackend scripted;
    scripted.Push(Reply({{"a", FakeCandidate("correct 1.20 1.10 1.30", "a")}}));
    RunConfig o = Options(1);
    o.temperatures = {0.3};
    ASSERT_TRUE(RunWith(&scripted, o).ok());
    ASSERT_EQ(scripted.calls(), 1);
    EXPECT_EQ(scripted.Requests()[0].temperature, 0.3);
  }
  // Several: one request per candidate, each asking for one, at its own temperature.
  TearDown();
  SetUp();
  ScriptedBackend scripted;
  scripted.Push(Reply({{"cool", FakeCandidate("correct 1.20 1.10 1.30", "cool")}}));
  scripted.Push(Reply({{"warm", FakeCandidate("correct 1.40 1.30 1.50", "warm")}}));
  RunConfig o = Options(1);
  o.temperatures = {0.2, 0.7};
  std::unique_ptr<Orchestrator> orchestrator;
  auto summary = RunWith(&scripted, o, &orchestrator);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const auto requests = scripted.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].temperature, 0.2);
  EXPECT_EQ(requests[1].temperature, 0.7);
  EXPECT_EQ(orchestrator->tree().size(), 3) << "both candidates are children of the iteration";
  // The run records them, and a resumed run reads them back.
  auto stored = StoredRunConfig(*store_);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->temperatures, (std::vector<double>{0.2, 0.7}));
}

}  // namespace search_orchestrator_test
}  // namespace kernelpro::search
