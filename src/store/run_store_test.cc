// The run store: what is written reads back the same after a reopen, a source is stored once, a
// step done twice leaves one row, a rolled-back or killed transaction leaves nothing, and a
// committed one survives a SIGKILL.
#include "store/run_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "agents/feedback_mode.h"
#include "agents/profile_analysis.h"
#include "core/subprocess.h"
#include "eval/verdict.h"
#include "llm/types.h"
#include "profile/metrics.h"
#include "tools/registry.h"

namespace kernelpro::store {
namespace store_run_store_test {

namespace fs = std::filesystem;

// ---- the crash child --------------------------------------------------------------------------
//
// The crash tests run this binary again with these variables set; the child does its writes and
// dies by SIGKILL before main (and before GoogleTest) runs. Exec'ing a fresh process, rather than
// forking this one, keeps the child free of whatever threads the test binary has.

constexpr const char* kChildModeVariable = "KERNELPRO_RUN_STORE_TEST_CHILD";
constexpr const char* kChildDirVariable = "KERNELPRO_RUN_STORE_TEST_DIR";
constexpr std::int64_t kRunId = 1;  // the crash tests' parent creates run 1 before the child
constexpr std::size_t kSpillBytes = 8 << 20;  // beyond SQLite's page cache: pages reach the WAL

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "crash child: %s\n", what);
  std::fflush(stderr);
  _exit(3);
}

void CheckOk(const Status& status) {
  if (!status.ok()) Die(status.ToString().c_str());
}

// One unit of work the way the orchestrator will write it: a candidate, its node and the journal
// entry, all in the caller's transaction.
void WriteStep(RunStore& store, int iteration, const std::string& source) {
  Result<StepRecord> step =
      store.RecordStep({kRunId, iteration, "evaluate", ""}, [&]() -> Result<Json> {
        Result<CandidateInsert> candidate = store.AddCandidate(kRunId, iteration, "s", source);
        if (!candidate.ok()) return candidate.status();
        NodeRecord node;
        node.run_id = kRunId;
        node.kind = "candidate";
        node.iteration = iteration;
        node.candidate_id = candidate->id;
        Result<std::int64_t> node_id = store.AddNode(node);
        if (!node_id.ok()) return node_id.status();
        return Json{{"candidate", candidate->id}, {"node", *node_id}};
      });
  CheckOk(step.status());
}

int RunChild(const std::string& mode, const std::string& dir) {
  Result<std::unique_ptr<RunStore>> opened = RunStore::Open(dir);
  CheckOk(opened.status());
  RunStore& store = **opened;
  if (mode == "uncommitted" || mode == "committed") {
    Result<Transaction> transaction = store.Begin();
    CheckOk(transaction.status());
    // Big sources make SQLite spill uncommitted pages into the WAL before COMMIT, so recovery
    // has real uncommitted frames to ignore.
    WriteStep(store, 1, std::string(kSpillBytes, 'a'));
    WriteStep(store, 2, std::string(kSpillBytes, 'b'));
    if (mode == "committed") CheckOk(transaction->Commit());
    raise(SIGKILL);  // no rollback, no close, no checkpoint
  }
  if (mode == "loop") {
    // Commits until killed from outside, reporting each commit after it returned.
    for (int iteration = 1;; ++iteration) {
      Result<Transaction> transaction = store.Begin();
      CheckOk(transaction.status());
      WriteStep(store, iteration, "source " + std::to_string(iteration));
      CheckOk(store.AddMemoryEntry({0, kRunId, "learnings", "entry", iteration, 0}).status());
      CheckOk(transaction->Commit());
      std::printf("%d\n", iteration);
      std::fflush(stdout);
    }
  }
  Die("unknown mode");
}

// Runs before main when this binary was started as a crash child.
[[maybe_unused]] const bool kIsCrashChild = [] {
  const char* mode = std::getenv(kChildModeVariable);
  const char* dir = std::getenv(kChildDirVariable);
  if (mode == nullptr || dir == nullptr) return false;
  _exit(RunChild(mode, dir));
}();

// ---- helpers -----------------------------------------------------------------------------------

class RunStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/run_store_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    dir_ = root_ + "/run";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(root_, fs::perms::owner_all, ignored);
    fs::remove_all(root_, ignored);
  }

  std::unique_ptr<RunStore> OpenStore() {
    Result<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::int64_t CreateRun(RunStore& store) {
    RunRecord run;
    run.problem_path = "problems/matmul.py";
    run.problem_hash = RunStore::Sha256Hex("class Model: ...");
    run.config = {{"iterations", 20}, {"search", "mcts"}};
    run.kernelpro_version = "0.1.0";
    Result<std::int64_t> id = store.CreateRun(run);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  std::string DbPath() const { return dir_ + "/" + kRunStoreFileName; }

  // A scalar from the database through a connection of its own, not the store's.
  std::string QueryText(const std::string& sql) {
    sqlite3* db = nullptr;
    std::string text = "<error>";
    if (sqlite3_open_v2(DbPath().c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
      sqlite3_stmt* statement = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
          sqlite3_step(statement) == SQLITE_ROW) {
        const unsigned char* value = sqlite3_column_text(statement, 0);
        text = value != nullptr ? reinterpret_cast<const char*>(value) : "<null>";
      }
      sqlite3_finalize(statement);
    }
    sqlite3_close(db);
    return text;
  }
  std::int64_t Count(const std::string& table) {
    return std::stoll(QueryText("SELECT COUNT(*) FROM " + table));
  }
  void ExecuteRaw(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(DbPath().c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error != nullptr ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }

  // Runs this binary as a crash child in `mode` against dir_.
  ProcessResult RunCrashChild(const std::string& mode, std::chrono::milliseconds timeout) {
    ProcessOptions options;
    options.argv = {fs::read_symlink("/proc/self/exe").string()};
    options.env = {{kChildModeVariable, mode}, {kChildDirVariable, dir_}};
    options.limits.wall_timeout = timeout;
    Result<ProcessResult> result = RunProcess(options);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : ProcessResult{};
  }

  std::string root_;
  std::string dir_;
};

// ---- opening -----------------------------------------------------------------------------------

TEST_F(RunStoreTest, CreatesTheRunDirectoryAndKeepsDataAcrossReopen) {
  std::int64_t run_id = 0;
  {
    std::unique_ptr<RunStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->path(), DbPath());
    run_id = CreateRun(*store);
  }
  EXPECT_TRUE(fs::exists(DbPath()));
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  Result<RunRecord> run = store->GetRun(run_id);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->problem_path, "problems/matmul.py");
  EXPECT_EQ(run->problem_hash, RunStore::Sha256Hex("class Model: ..."));
  EXPECT_EQ(run->config, (Json{{"iterations", 20}, {"search", "mcts"}}));
  EXPECT_EQ(run->status, RunStatus::kRunning);
  EXPECT_EQ(run->kernelpro_version, "0.1.0");
  EXPECT_FALSE(run->reference_analysis.has_value());
  EXPECT_GT(run->created_ms, 0);
  Result<std::vector<RunRecord>> runs = store->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().id, run_id);
  EXPECT_EQ(store->GetRun(run_id + 1).status().code(), Status::Code::kNotFound);
}

TEST_F(RunStoreTest, UsesWalFullSyncForeignKeysAndRecordsTheSchemaVersion) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(QueryText("PRAGMA journal_mode"), "wal");  // persistent in the file
  EXPECT_EQ(QueryText("SELECT version FROM schema_version"),
            std::to_string(kRunStoreSchemaVersion));
  // Foreign keys are per connection: the store's rejects a node under a parent that is not there.
  const std::int64_t run_id = CreateRun(*store);
  NodeRecord orphan;
  orphan.run_id = run_id;
  orphan.kind = "candidate";
  orphan.parent_id = 999;
  Result<std::int64_t> added = store->AddNode(orphan);
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("FOREIGN KEY"), std::string::npos)
      << added.status().message();
  EXPECT_EQ(Count("nodes"), 0);
}

TEST_F(RunStoreTest, RefusesADatabaseFromANewerKernelpro) {
  OpenStore().reset();
  ExecuteRaw("UPDATE schema_version SET version = 99");
  Result<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(store.status().message().find("schema version 99, newer than the 1"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(QueryText("SELECT version FROM schema_version"), "99");  // not touched
}

TEST_F(RunStoreTest, RefusesSomeoneElsesDatabaseAndAFileThatIsNoDatabase) {
  fs::create_directories(dir_);
  ExecuteRaw("CREATE TABLE users (name TEXT)");
  Result<std::unique_ptr<RunStore>> foreign = RunStore::Open(dir_);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("not a kernelpro run store"), std::string::npos)
      << foreign.status().message();

  fs::remove(DbPath());
  std::ofstream(DbPath()) << std::string(4096, 'x');
  Result<std::unique_ptr<RunStore>> garbage = RunStore::Open(dir_);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), Status::Code::kIoError);
  EXPECT_NE(garbage.status().message().find("not a usable SQLite database"), std::string::npos)
      << garbage.status().message();
}

TEST_F(RunStoreTest, OpeningWithoutCreateWantsAnExistingStore) {
  RunStoreOptions options;
  options.create = false;
  Result<std::unique_ptr<RunStore>> missing = RunStore::Open(dir_, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(fs::exists(dir_));
  OpenStore().reset();
  EXPECT_TRUE(RunStore::Open(dir_, options).ok());
}

TEST_F(RunStoreTest, AnUnwritableRunDirectoryIsAClearError) {
  // A regular file where a directory should be stops root as well as anyone else.
  const std::string file = root_ + "/not_a_directory";
  std::ofstream(file) << "x";
  Result<std::unique_ptr<RunStore>> under_file = RunStore::Open(file + "/run");
  ASSERT_FALSE(under_file.ok());
  EXPECT_EQ(under_file.status().code(), Status::Code::kIoError);
  EXPECT_NE(under_file.status().message().find("cannot create the run directory " + file),
            std::string::npos)
      << under_file.status().message();

  if (geteuid() == 0) return;  // root writes anywhere; the permission case needs a normal user
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  Result<std::unique_ptr<RunStore>> read_only = RunStore::Open(dir_);
  ASSERT_FALSE(read_only.ok());
  EXPECT_NE(read_only.status().message().find("is not writable"), std::string::npos)
      << read_only.status().message();
}

// ---- round trips -------------------------------------------------------------------------------

TEST_F(RunStoreTest, RunStatusAndReferenceAnalysisRoundTrip) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  const Json reference = {{"bottleneck", "memory"}, {"flops", 1.5e12}, {"notes", {"a", "b"}}};
  ASSERT_TRUE(store->SetReferenceAnalysis(run_id, reference).ok());
  ASSERT_TRUE(store->SetRunStatus(run_id, RunStatus::kFailed, "budget exhausted").ok());
  Result<RunRecord> run = store->GetRun(run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_EQ(run->status_message, "budget exhausted");
  ASSERT_TRUE(run->reference_analysis.has_value());
  EXPECT_EQ(*run->reference_analysis, reference);
  EXPECT_EQ(store->SetRunStatus(run_id + 7, RunStatus::kFinished).code(), Status::Code::kNotFound);
}

TEST_F(RunStoreTest, AnIdenticalSourceIsStoredOncePerRun) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  // NUL and bytes that are not UTF-8 must survive: a source is text the LLM wrote.
  const std::string source = std::string("import torch\n\0tail \xff\xfe", 20);
  Result<CandidateInsert> first = store->AddCandidate(run_id, 1, "tile 32x32", source);
  Result<CandidateInsert> again = store->AddCandidate(run_id, 4, "another idea", source);
  Result<CandidateInsert> other = store->AddCandidate(run_id, 4, "vectorise", source + " ");
  ASSERT_TRUE(first.ok() && again.ok() && other.ok()) << first.status().ToString();
  EXPECT_TRUE(first->inserted);
  EXPECT_FALSE(again->inserted);
  EXPECT_EQ(again->id, first->id);
  EXPECT_TRUE(other->inserted);
  EXPECT_NE(other->id, first->id);
  EXPECT_EQ(Count("candidates"), 2);

  Result<CandidateRecord> read = store->GetCandidate(first->id);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->source, source);
  EXPECT_EQ(read->strategy, "tile 32x32");  // the first writer's
  EXPECT_EQ(read->iteration, 1);
  EXPECT_EQ(read->run_id, run_id);
  EXPECT_EQ(read->sha256, RunStore::Sha256Hex(source));
  EXPECT_EQ(RunStore::Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  Result<std::optional<CandidateRecord>> by_hash =
      store->FindCandidateByHash(run_id, RunStore::Sha256Hex(source + " "));
  ASSERT_TRUE(by_hash.ok() && by_hash->has_value());
  EXPECT_EQ((*by_hash)->id, other->id);
  Result<std::optional<CandidateRecord>> absent = store->FindCandidateByHash(run_id, "00");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  EXPECT_EQ(store->GetCandidate(12345).status().code(), Status::Code::kNotFound);

  // Another run in the same database keeps its own copy.
  const std::int64_t second_run = CreateRun(*store);
  Result<CandidateInsert> in_second = store->AddCandidate(second_run, 1, "x", source);
  ASSERT_TRUE(in_second.ok());
  EXPECT_TRUE(in_second->inserted);
}

TEST_F(RunStoreTest, NodesRoundTripUpdateAndTheBestCorrectOneIsFound) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  Result<std::optional<NodeRecord>> none = store->BestCorrectNode(run_id);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  NodeRecord root;
  root.run_id = run_id;
  root.kind = "root";
  Result<std::int64_t> root_id = store->AddNode(root);
  ASSERT_TRUE(root_id.ok()) << root_id.status().ToString();

  Result<CandidateInsert> candidate = store->AddCandidate(run_id, 1, "s", "code");
  ASSERT_TRUE(candidate.ok());
  NodeRecord child;
  child.run_id = run_id;
  child.parent_id = *root_id;
  child.kind = "candidate";
  child.mode = "optimize";
  child.iteration = 3;
  child.status = "correct";
  child.reward = 0.75;
  child.speedup = 1.8;
  child.speedup_lo = 1.7;
  child.speedup_hi = 1.95;
  child.visits = 2;
  child.total_reward = 1.25;
  child.candidate_id = candidate->id;
  Result<std::int64_t> child_id = store->AddNode(child);
  ASSERT_TRUE(child_id.ok());

  Result<NodeRecord> read = store->GetNode(*child_id);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->parent_id, std::optional<std::int64_t>(*root_id));
  EXPECT_EQ(read->kind, "candidate");
  EXPECT_EQ(read->mode, "optimize");
  EXPECT_EQ(read->iteration, 3);
  EXPECT_EQ(read->status, "correct");
  EXPECT_DOUBLE_EQ(read->reward, 0.75);
  EXPECT_EQ(read->speedup, std::optional<double>(1.8));
  EXPECT_EQ(read->speedup_lo, std::optional<double>(1.7));
  EXPECT_EQ(read->speedup_hi, std::optional<double>(1.95));
  EXPECT_EQ(read->visits, 2);
  EXPECT_DOUBLE_EQ(read->total_reward, 1.25);
  EXPECT_FALSE(read->terminal);
  EXPECT_EQ(read->candidate_id, std::optional<std::int64_t>(candidate->id));

  // Backpropagation rewrites the statistics.
  NodeRecord updated = *read;
  updated.visits = 3;
  updated.total_reward = 2.0;
  updated.terminal = true;
  ASSERT_TRUE(store->UpdateNode(updated).ok());
  Result<NodeRecord> reread = store->GetNode(*child_id);
  ASSERT_TRUE(reread.ok());
  EXPECT_EQ(reread->visits, 3);
  EXPECT_DOUBLE_EQ(reread->total_reward, 2.0);
  EXPECT_TRUE(reread->terminal);
  updated.id = 999;
  EXPECT_EQ(store->UpdateNode(updated).code(), Status::Code::kNotFound);

  // A faster node that is incorrect does not count; of equal speedups the earlier wins.
  NodeRecord wrong = child;
  wrong.status = "incorrect";
  wrong.speedup = 9.0;
  ASSERT_TRUE(store->AddNode(wrong).ok());
  NodeRecord tie = child;
  tie.iteration = 5;
  ASSERT_TRUE(store->AddNode(tie).ok());
  NodeRecord slower = child;
  slower.speedup = 1.1;
  ASSERT_TRUE(store->AddNode(slower).ok());
  Result<std::optional<NodeRecord>> best = store->BestCorrectNode(run_id);
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->id, *child_id);

  Result<std::vector<NodeRecord>> nodes = store->ListNodes(run_id);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 5u);
  for (std::size_t i = 1; i < nodes->size(); ++i) EXPECT_LT((*nodes)[i - 1].id, (*nodes)[i].id);
  EXPECT_EQ(nodes->front().kind, "root");
  EXPECT_FALSE(nodes->front().parent_id.has_value());
  EXPECT_FALSE(nodes->front().speedup.has_value());
}

TEST_F(RunStoreTest, TheLatestEvaluationOfACandidateReadsBackWithItsFullResult) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  Result<CandidateInsert> candidate = store->AddCandidate(run_id, 1, "s", "code");
  ASSERT_TRUE(candidate.ok());
  Result<std::optional<EvaluationRecord>> nothing = store->LatestEvaluation(candidate->id);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->has_value());

  eval::EvalResult failed;
  failed.status = eval::EvalStatus::kCompileError;
  failed.message = "nvcc: error";
  failed.diagnostics = "kernel.cu(3): error: identifier \"x\" is undefined";
  EvaluationRecord first;
  first.candidate_id = candidate->id;
  first.status = eval::EvalStatusName(failed.status);
  first.message = failed.message;
  first.result = ToJson(failed);
  ASSERT_TRUE(store->AddEvaluation(first).ok());

  eval::EvalResult passed;
  passed.status = eval::EvalStatus::kCorrect;
  passed.message = "correct";
  passed.speedup = RatioInterval{1.234567890123, 1.2, 1.3, 0.95};
  passed.reference_time = eval::TimingSummary{};
  passed.reference_time->samples = {2.0, 2.1};
  passed.total_seconds = 12.5;
  EvaluationRecord second;
  second.candidate_id = candidate->id;
  second.status = eval::EvalStatusName(passed.status);
  second.message = passed.message;
  second.speedup = passed.speedup->estimate;
  second.speedup_lo = passed.speedup->low;
  second.speedup_hi = passed.speedup->high;
  second.reference_ms = 2.05;
  second.candidate_ms = 1.66;
  second.total_seconds = passed.total_seconds;
  second.result = ToJson(passed);
  Result<std::int64_t> second_id = store->AddEvaluation(second);
  ASSERT_TRUE(second_id.ok());

  Result<std::optional<EvaluationRecord>> latest = store->LatestEvaluation(candidate->id);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  const EvaluationRecord& read = **latest;
  EXPECT_EQ(read.id, *second_id);
  EXPECT_EQ(read.status, "correct");
  EXPECT_EQ(read.speedup, std::optional<double>(1.234567890123));
  EXPECT_EQ(read.speedup_lo, std::optional<double>(1.2));
  EXPECT_EQ(read.speedup_hi, std::optional<double>(1.3));
  EXPECT_EQ(read.reference_ms, std::optional<double>(2.05));
  EXPECT_EQ(read.candidate_ms, std::optional<double>(1.66));
  EXPECT_DOUBLE_EQ(read.total_seconds, 12.5);
  EXPECT_EQ(read.result, ToJson(passed));  // exact, doubles included
  EXPECT_EQ(Count("evaluations"), 2);
}

TEST_F(RunStoreTest, ARowThatDoesNotReadBackIsAnErrorNamingWhatIsWrong) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  Result<CandidateInsert> candidate = store->AddCandidate(run_id, 1, "s", "code");
  ASSERT_TRUE(candidate.ok());
  EvaluationRecord evaluation;
  evaluation.candidate_id = candidate->id;
  evaluation.status = "correct";
  ASSERT_TRUE(store->AddEvaluation(evaluation).ok());

  ExecuteRaw("UPDATE evaluations SET result_json = '{\"speedup\": '");
  Result<std::optional<EvaluationRecord>> read = store->LatestEvaluation(candidate->id);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Status::Code::kInternal);
  EXPECT_EQ(read.status().message(),
            "the run store holds malformed JSON in evaluations.result_json");

  ExecuteRaw("UPDATE runs SET config_json = 'not json'");
  EXPECT_EQ(store->GetRun(run_id).status().message(),
            "the run store holds malformed JSON in runs.config_json");
  ExecuteRaw("PRAGMA ignore_check_constraints = ON; UPDATE runs SET status = 'paused'");
  Result<std::vector<RunRecord>> runs = store->ListRuns();
  ASSERT_FALSE(runs.ok());
  EXPECT_EQ(runs.status().message(), "the run store holds an unknown run status");
}

TEST_F(RunStoreTest, MetricsToolOutputsAndProfileAnalysesRoundTrip) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  Result<CandidateInsert> candidate = store->AddCandidate(run_id, 1, "s", "code");
  ASSERT_TRUE(candidate.ok());

  profile::Metrics metrics;
  metrics.notes = {"ncu: 12 kernels, selected the slowest", "no timeline"};
  ASSERT_TRUE(store->AddMetrics({0, candidate->id, ToJson(metrics), 0}).ok());
  Result<std::optional<MetricsRecord>> read_metrics = store->LatestMetrics(candidate->id);
  ASSERT_TRUE(read_metrics.ok() && read_metrics->has_value());
  EXPECT_EQ((*read_metrics)->metrics, ToJson(metrics));

  tools::Analysis analysis;
  analysis.bottleneck = roofline::Bottleneck::kMemory;
  analysis.quiet = {"bank_conflicts"};
  tools::ToolOutput finding;
  finding.tool = "uncoalesced_access";
  finding.triggered = true;
  finding.title = "Uncoalesced global loads";
  analysis.findings.push_back(finding);
  ToolOutputRecord output;
  output.candidate_id = candidate->id;
  output.analysis = ToJson(analysis);
  output.guidance = "## Uncoalesced global loads\n...";
  ASSERT_TRUE(store->AddToolOutput(output).ok());
  Result<std::optional<ToolOutputRecord>> read_output = store->LatestToolOutput(candidate->id);
  ASSERT_TRUE(read_output.ok() && read_output->has_value());
  EXPECT_EQ((*read_output)->analysis, ToJson(analysis));
  EXPECT_EQ((*read_output)->guidance, output.guidance);

  agents::ProfileAnalysis profile;
  profile.bottleneck = "memory";
  profile.severity = "high";
  profile.summary = "DRAM bound";
  profile.recommendations = {{1, "Use shared memory tiles", "each byte is read 32 times"}};
  ProfileAnalysisRecord record;
  record.candidate_id = candidate->id;
  record.feedback_mode = agents::ToString(agents::FeedbackMode::kTools);
  record.bottleneck = profile.bottleneck;
  record.severity = profile.severity;
  record.analysis = agents::ToJson(profile);
  record.feedback = "Bottleneck: memory (high)";
  ASSERT_TRUE(store->AddProfileAnalysis(record).ok());
  Result<std::optional<ProfileAnalysisRecord>> read_profile =
      store->LatestProfileAnalysis(candidate->id);
  ASSERT_TRUE(read_profile.ok() && read_profile->has_value());
  EXPECT_EQ((*read_profile)->feedback_mode, "tools");
  EXPECT_EQ((*read_profile)->bottleneck, "memory");
  EXPECT_EQ((*read_profile)->severity, "high");
  EXPECT_EQ((*read_profile)->feedback, record.feedback);
  Result<agents::ProfileAnalysis> parsed =
      agents::ProfileAnalysisFromJson((*read_profile)->analysis);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->summary, "DRAM bound");
  ASSERT_EQ(parsed->recommendations.size(), 1u);
  EXPECT_EQ(parsed->recommendations[0].action, "Use shared memory tiles");

  // Candidates that were never profiled have none of these.
  Result<std::optional<MetricsRecord>> other = store->LatestMetrics(candidate->id + 1);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
}

LlmExchangeRecord Exchange(std::int64_t run_id, int iteration, const std::string& purpose,
                           std::int64_t input_tokens, std::int64_t output_tokens, double cost,
                           bool cost_known) {
  llm::Request request;
  request.system = "You write CUDA kernels.";
  request.messages = {llm::Message::User("Make it faster.")};
  request.temperature = 0.7;
  llm::Response response;
  response.text = "```python\nclass ModelNew: ...\n```";
  response.usage = {input_tokens, output_tokens};
  response.model = "model-x";
  LlmExchangeRecord record;
  record.run_id = run_id;
  record.iteration = iteration;
  record.purpose = purpose;
  record.provider = "openai";
  record.model = "model-x";
  record.input_tokens = input_tokens;
  record.output_tokens = output_tokens;
  record.cost_usd = cost;
  record.cost_known = cost_known;
  record.latency_ms = 1500.5;
  record.attempts = 2;
  record.request = llm::ToJson(request);
  record.response = llm::ToJson(response);
  record.started_ms = 1700000000123;
  return record;
}

TEST_F(RunStoreTest, LlmExchangesRoundTripAndSumPerIteration) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  LlmExchangeRecord programmer = Exchange(run_id, 1, "programmer", 1000, 500, 0.02, true);
  programmer.step_key = StepKeyText({run_id, 1, "generate", ""});
  LlmExchangeRecord failed = Exchange(run_id, 1, "profiling", 0, 0, 0, true);
  failed.response.reset();
  failed.error = llm::ToJson(llm::MakeError(llm::ErrorKind::kRateLimited, "slow down", 429));
  LlmExchangeRecord unpriced = Exchange(run_id, 2, "memory", 300, 100, 0, false);
  for (const LlmExchangeRecord& record : {programmer, failed, unpriced}) {
    ASSERT_TRUE(store->AddLlmExchange(record).ok());
  }

  Result<std::vector<LlmExchangeRecord>> first = store->ListLlmExchanges(run_id, 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  const LlmExchangeRecord& read = (*first)[0];
  EXPECT_EQ(read.purpose, "programmer");
  EXPECT_EQ(read.step_key, "generate");
  EXPECT_EQ(read.provider, "openai");
  EXPECT_EQ(read.model, "model-x");
  EXPECT_EQ(read.input_tokens, 1000);
  EXPECT_EQ(read.output_tokens, 500);
  EXPECT_DOUBLE_EQ(read.cost_usd, 0.02);
  EXPECT_TRUE(read.cost_known);
  EXPECT_DOUBLE_EQ(read.latency_ms, 1500.5);
  EXPECT_EQ(read.attempts, 2);
  EXPECT_EQ(read.started_ms, 1700000000123);
  EXPECT_EQ(read.request, programmer.request);
  ASSERT_TRUE(read.response.has_value());
  EXPECT_EQ(*read.response, *programmer.response);
  EXPECT_FALSE(read.error.has_value());
  Result<llm::Response> response = llm::ResponseFromJson(*read.response);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->text, "```python\nclass ModelNew: ...\n```");
  EXPECT_TRUE(llm::RequestFromJson(read.request).ok());
  ASSERT_TRUE((*first)[1].error.has_value());
  EXPECT_FALSE((*first)[1].response.has_value());
  Result<llm::Error> error = llm::ErrorFromJson(*(*first)[1].error);
  ASSERT_TRUE(error.ok()) << error.status().ToString() << " " << DumpJson(*(*first)[1].error);
  EXPECT_EQ(error->http_status, 429);

  Result<std::vector<LlmExchangeRecord>> all = store->ListLlmExchanges(run_id);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  Result<std::vector<LlmExchangeRecord>> for_step =
      store->ListLlmExchangesForStep({run_id, 1, "generate", ""});
  ASSERT_TRUE(for_step.ok());
  ASSERT_EQ(for_step->size(), 1u);
  EXPECT_EQ(for_step->front().purpose, "programmer");

  Result<std::vector<LlmTotals>> by_iteration = store->LlmTotalsByIteration(run_id);
  ASSERT_TRUE(by_iteration.ok());
  ASSERT_EQ(by_iteration->size(), 2u);
  const LlmTotals& one = (*by_iteration)[0];
  EXPECT_EQ(one.iteration, std::optional<int>(1));
  EXPECT_EQ(one.exchanges, 2);
  EXPECT_EQ(one.failures, 1);
  EXPECT_EQ(one.input_tokens, 1000);
  EXPECT_EQ(one.output_tokens, 500);
  EXPECT_DOUBLE_EQ(one.cost_usd, 0.02);
  EXPECT_TRUE(one.cost_complete);
  EXPECT_EQ((*by_iteration)[1].iteration, std::optional<int>(2));
  EXPECT_FALSE((*by_iteration)[1].cost_complete);

  Result<LlmTotals> total = store->LlmTotalsForRun(run_id);
  ASSERT_TRUE(total.ok());
  EXPECT_FALSE(total->iteration.has_value());
  EXPECT_EQ(total->exchanges, 3);
  EXPECT_EQ(total->input_tokens, 1300);
  EXPECT_EQ(total->output_tokens, 600);
  EXPECT_FALSE(total->cost_complete);
  EXPECT_DOUBLE_EQ(total->latency_ms, 3 * 1500.5);

  Result<LlmTotals> empty = store->LlmTotalsForRun(CreateRun(*store));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->exchanges, 0);
  EXPECT_TRUE(empty->cost_complete);
}

TEST_F(RunStoreTest, MemoryEntriesKeepTheirOrder) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"learnings", "z comes first"}, {"errors_and_corrections", "a second"}, {"key_files", "m"}};
  int iteration = 0;
  for (const auto& [section, text] : entries) {
    ASSERT_TRUE(store->AddMemoryEntry({0, run_id, section, text, ++iteration, 0}).ok());
  }
  Result<std::vector<MemoryRecord>> read = store->ListMemoryEntries(run_id);
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), 3u);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ((*read)[i].section, entries[i].first);
    EXPECT_EQ((*read)[i].text, entries[i].second);
    EXPECT_EQ((*read)[i].iteration, static_cast<int>(i) + 1);
  }
}

// ---- the step journal --------------------------------------------------------------------------

TEST_F(RunStoreTest, AStepDoneTwiceLeavesOneRowAndItsRowsOnce) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  const StepKey step{run_id, 7, "evaluate", "candidate:1"};

  Result<std::optional<StepRecord>> before = store->GetStep(step);
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->has_value());

  // Started, crashed, started again: one row counting two attempts.
  ASSERT_TRUE(store->StartStep(step).ok());
  Result<StepRecord> restarted = store->StartStep(step);
  ASSERT_TRUE(restarted.ok());
  EXPECT_EQ(restarted->state, StepState::kStarted);
  EXPECT_EQ(restarted->attempts, 2);
  Result<std::vector<StepRecord>> unfinished = store->UnfinishedSteps(run_id);
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 1u);
  EXPECT_EQ(unfinished->front().key.key, "candidate:1");

  int writes = 0;
  auto write = [&]() -> Result<Json> {
    ++writes;
    Result<CandidateInsert> candidate = store->AddCandidate(run_id, 7, "s", "code");
    if (!candidate.ok()) return candidate.status();
    EvaluationRecord evaluation;
    evaluation.candidate_id = candidate->id;
    evaluation.status = "correct";
    Result<std::int64_t> id = store->AddEvaluation(evaluation);
    if (!id.ok()) return id.status();
    return Json{{"evaluation", *id}};
  };
  Result<StepRecord> done = store->RecordStep(step, write);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->state, StepState::kDone);
  EXPECT_EQ(done->attempts, 2);
  EXPECT_TRUE(done->done_ms.has_value());
  const Json payload = done->payload;
  EXPECT_TRUE(payload.contains("evaluation"));

  // Doing it again (a resumed run that did not check first) changes nothing.
  Result<StepRecord> again = store->RecordStep(step, write);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(writes, 1);
  EXPECT_EQ(again->payload, payload);
  Result<StepRecord> start_after_done = store->StartStep(step);
  ASSERT_TRUE(start_after_done.ok());
  EXPECT_EQ(start_after_done->state, StepState::kDone);
  EXPECT_EQ(start_after_done->attempts, 2);
  EXPECT_EQ(Count("steps"), 1);
  EXPECT_EQ(Count("evaluations"), 1);
  EXPECT_EQ(Count("candidates"), 1);
  Result<std::vector<StepRecord>> none_unfinished = store->UnfinishedSteps(run_id);
  ASSERT_TRUE(none_unfinished.ok());
  EXPECT_TRUE(none_unfinished->empty());
}

TEST_F(RunStoreTest, StepsOfAnIterationReadInJournalOrder) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  Result<std::optional<int>> empty = store->LastJournaledIteration(run_id);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());

  ASSERT_TRUE(
      store->RecordStep({run_id, 2, "select", ""},
                        [] {
                          return Result<Json>(Json{{"node", 4}});
                        })
          .ok());
  ASSERT_TRUE(store->RecordStep({run_id, 2, "generate", ""}).ok());
  ASSERT_TRUE(store->StartStep({run_id, 2, "evaluate", "candidate:9"}).ok());
  ASSERT_TRUE(store->RecordStep({run_id, 1, "select", ""}).ok());

  Result<std::vector<StepRecord>> steps = store->StepsForIteration(run_id, 2);
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_EQ((*steps)[0].key.step, "select");
  EXPECT_EQ((*steps)[0].payload, (Json{{"node", 4}}));
  EXPECT_EQ((*steps)[1].key.step, "generate");
  EXPECT_EQ((*steps)[1].payload, Json::object());
  EXPECT_EQ((*steps)[2].key.step, "evaluate");
  EXPECT_EQ((*steps)[2].state, StepState::kStarted);
  Result<std::optional<int>> last = store->LastJournaledIteration(run_id);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, std::optional<int>(2));
}

TEST_F(RunStoreTest, AFailingStepWriteLeavesNothingAndTheStepUnfinished) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  const StepKey step{run_id, 1, "record", ""};
  ASSERT_TRUE(store->StartStep(step).ok());
  Result<StepRecord> failed = store->RecordStep(step, [&]() -> Result<Json> {
    if (!store->AddCandidate(run_id, 1, "s", "half-written").ok()) return Json();
    return Status::Internal("tree update failed");
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "tree update failed");
  EXPECT_EQ(Count("candidates"), 0);
  Result<std::optional<StepRecord>> read = store->GetStep(step);
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->state, StepState::kStarted);
}

// ---- transactions ------------------------------------------------------------------------------

TEST_F(RunStoreTest, ARolledBackTransactionLeavesNothing) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  {
    Result<Transaction> transaction = store->Begin();
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(store->AddCandidate(run_id, 1, "s", "one").ok());
    ASSERT_TRUE(store->RecordStep({run_id, 1, "generate", ""}).ok());
    ASSERT_TRUE(transaction->Rollback().ok());
    EXPECT_FALSE(transaction->Commit().ok());  // already ended
  }
  {
    Result<Transaction> transaction = store->Begin();
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(store->AddMemoryEntry({0, run_id, "learnings", "dropped", 1, 0}).ok());
  }  // destroyed without Commit
  EXPECT_EQ(Count("candidates"), 0);
  EXPECT_EQ(Count("steps"), 0);
  EXPECT_EQ(Count("memory_entries"), 0);

  // A savepoint rolled back inside a committed transaction drops only its own writes.
  {
    Result<Transaction> outer = store->Begin();
    ASSERT_TRUE(outer.ok());
    ASSERT_TRUE(store->AddMemoryEntry({0, run_id, "learnings", "kept", 1, 0}).ok());
    {
      Result<Transaction> inner = store->Begin();
      ASSERT_TRUE(inner.ok());
      ASSERT_TRUE(store->AddMemoryEntry({0, run_id, "learnings", "inner", 1, 0}).ok());
    }
    ASSERT_TRUE(outer->Commit().ok());
  }
  Result<std::vector<MemoryRecord>> entries = store->ListMemoryEntries(run_id);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().text, "kept");
}

TEST_F(RunStoreTest, AnotherThreadsWriteWaitsForATransactionInsteadOfJoiningIt) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  std::atomic<bool> hook_started{false};
  Status hook_status;
  std::thread hook;
  {
    Result<Transaction> transaction = store->Begin();
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(store->AddMemoryEntry({0, run_id, "learnings", "rolled back", 1, 0}).ok());
    // Like the LLM exchange hook, firing on a client thread in the middle of a step.
    hook = std::thread([&] {
      hook_started = true;
      hook_status = store->AddLlmExchange(Exchange(run_id, 1, "memory", 1, 1, 0, true)).status();
    });
    while (!hook_started) std::this_thread::yield();
    // Give the hook every chance to run; were it to write now, the rollback would take it along.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(transaction->Rollback().ok());
  }
  hook.join();
  EXPECT_TRUE(hook_status.ok()) << hook_status.ToString();
  EXPECT_EQ(Count("llm_exchanges"), 1);
  EXPECT_EQ(Count("memory_entries"), 0);
}

TEST_F(RunStoreTest, ConcurrentWritersLoseNothing) {
  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::int64_t run_id = CreateRun(*store);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if (!store->AddLlmExchange(Exchange(run_id, i, "programmer", 10, 1, 0.001, true)).ok()) {
          ++failures;
        }
        const std::string text = std::to_string(t) + ":" + std::to_string(i);
        if (!store->AddMemoryEntry({0, run_id, "learnings", text, i, 0}).ok()) ++failures;
      }
    });
  }
  // Meanwhile the orchestrator writes whole steps.
  threads.emplace_back([&] {
    for (int i = 0; i < kPerThread; ++i) {
      Result<Transaction> transaction = store->Begin();
      if (!transaction.ok()) {
        ++failures;
        continue;
      }
      const bool written =
          store->AddCandidate(run_id, i, "s", "source " + std::to_string(i)).ok() &&
          store->RecordStep({run_id, i, "generate", ""}).ok();
      if (!written || !transaction->Commit().ok()) ++failures;
    }
  });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(Count("llm_exchanges"), kThreads * kPerThread);
  EXPECT_EQ(Count("memory_entries"), kThreads * kPerThread);
  EXPECT_EQ(Count("candidates"), kPerThread);
  EXPECT_EQ(Count("steps"), kPerThread);
  Result<LlmTotals> totals = store->LlmTotalsForRun(run_id);
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->input_tokens, 10 * kThreads * kPerThread);
  Result<std::vector<MemoryRecord>> entries = store->ListMemoryEntries(run_id);
  ASSERT_TRUE(entries.ok());
  std::set<std::string> distinct;
  for (const MemoryRecord& entry : *entries) distinct.insert(entry.text);
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kThreads * kPerThread));
}

// ---- crash safety ------------------------------------------------------------------------------

TEST_F(RunStoreTest, AProcessKilledBeforeCommitLeavesNothingOfItsTransaction) {
  {
    std::unique_ptr<RunStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(CreateRun(*store), kRunId);
  }
  const ProcessResult child = RunCrashChild("uncommitted", std::chrono::seconds(120));
  ASSERT_EQ(child.term_signal, SIGKILL) << child.Describe() << "\n" << child.stderr_text;
  // The transaction was big enough to spill into the WAL before it died.
  const std::string wal = DbPath() + "-wal";
  EXPECT_GT(fs::exists(wal) ? fs::file_size(wal) : 0, kSpillBytes);

  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(QueryText("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(Count("candidates"), 0);
  EXPECT_EQ(Count("nodes"), 0);
  EXPECT_EQ(Count("steps"), 0);
  Result<std::optional<StepRecord>> step = store->GetStep({kRunId, 1, "evaluate", ""});
  ASSERT_TRUE(step.ok());
  EXPECT_FALSE(step->has_value());  // a resumed run redoes it
  // And the store takes writes again.
  EXPECT_TRUE(store->AddCandidate(kRunId, 1, "s", "after the crash").ok());
}

TEST_F(RunStoreTest, AProcessKilledAfterCommitKeepsEverything) {
  {
    std::unique_ptr<RunStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(CreateRun(*store), kRunId);
  }
  const ProcessResult child = RunCrashChild("committed", std::chrono::seconds(120));
  ASSERT_EQ(child.term_signal, SIGKILL) << child.Describe() << "\n" << child.stderr_text;

  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(QueryText("PRAGMA integrity_check"), "ok");
  for (int iteration : {1, 2}) {
    Result<std::optional<StepRecord>> step = store->GetStep({kRunId, iteration, "evaluate", ""});
    ASSERT_TRUE(step.ok() && step->has_value());
    EXPECT_EQ((*step)->state, StepState::kDone);
    Result<NodeRecord> node = store->GetNode((*step)->payload.value("node", std::int64_t{0}));
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    ASSERT_TRUE(node->candidate_id.has_value());
    Result<CandidateRecord> candidate = store->GetCandidate(*node->candidate_id);
    ASSERT_TRUE(candidate.ok());
    EXPECT_EQ(candidate->source, std::string(kSpillBytes, iteration == 1 ? 'a' : 'b'));
  }
}

TEST_F(RunStoreTest, AProcessKilledAtAnyMomentLeavesWholeStepsOnly) {
  {
    std::unique_ptr<RunStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(CreateRun(*store), kRunId);
  }
  // The child commits steps in a loop until the timeout SIGKILLs it, wherever it is.
  const ProcessResult child = RunCrashChild("loop", std::chrono::milliseconds(1500));
  ASSERT_TRUE(child.timed_out) << child.Describe() << "\n" << child.stderr_text;
  int reported = 0;
  std::istringstream lines(child.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) reported = std::stoi(line);
  }

  // Hundreds of commits fit in the window; none means the child was stuck, not killed mid-write.
  ASSERT_GT(reported, 0) << child.stderr_text;

  std::unique_ptr<RunStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(QueryText("PRAGMA integrity_check"), "ok");
  const std::int64_t steps = Count("steps");
  // Every commit the child saw return is there; at most one more, committed but not reported.
  EXPECT_GE(steps, reported);
  EXPECT_LE(steps, reported + 1);
  // Each step is whole: its candidate, node and memory entry are there with it, or none is.
  EXPECT_EQ(Count("candidates"), steps);
  EXPECT_EQ(Count("nodes"), steps);
  EXPECT_EQ(Count("memory_entries"), steps);
  Result<std::vector<StepRecord>> unfinished = store->UnfinishedSteps(kRunId);
  ASSERT_TRUE(unfinished.ok());
  EXPECT_TRUE(unfinished->empty());
}

}  // namespace store_run_store_test
}  // namespace kernelpro::store
