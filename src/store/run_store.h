// The run store: everything one optimisation run produced, as rows of one SQLite database in the
// run directory (RUN_DIR/run.db), so that a run killed at any instant resumes from it and a
// report reads it.
//
// Tables (schema version kRunStoreSchemaVersion; each declared once, column by column, in
// run_store_tables.h):
//
//   runs              one per run: problem path + hash, config, status, kernelpro version
//   candidates        kernel sources, unique per (run, sha256): the same source is stored once
//   nodes             the search tree: parent, mode, iteration, status, reward, speedup + interval,
//                     visits, total reward, terminal, candidate
//   evaluations       verdicts on a candidate (status, speedup + interval, times, full JSON)
//   metrics           a candidate's profile (Metrics JSON)
//   tool_outputs      the tool registry's Analysis of a candidate and the guidance rendered from it
//   profile_analyses  the profiling agent's answer for a candidate and the feedback text it gave
//   llm_exchanges     every LLM request: purpose, tokens, cost, latency, request/response/error
//   memory_entries    the search memory, in the order it was learnt
//   steps             the step journal a resumed run reads (below)
//
// The store knows kernelpro's structures only as JSON (ToJson of EvalResult, Metrics, Analysis,
// ProfileAnalysis, llm::Request/Response/Error, ReferenceAnalysis): it sits beside profile/ and
// llm/ in the module order and depends on core/ only. What a report filters or sums on (status,
// speedup, interval, tokens, cost, iteration, node and parent ids, mode, strategy, hash) is a
// real column; the rest is a JSON TEXT column that round-trips exactly.
//
// Resume. The orchestrator journals each step of an iteration in `steps`, keyed by
// (run, iteration, step, key), e.g. (1, 7, "evaluate", "candidate:42"):
//
//   if (store.GetStep(k) is done) use its payload and skip the work;
//   store.StartStep(k);                        // journal: started (attempts += 1)
//   ... slow work: LLM call, build, GPU run ...   (no transaction held)
//   store.RecordStep(k, [&] { write rows; return payload; });
//                                              // the rows AND "done" in one transaction
//
// A crash before RecordStep commits leaves the step "started" and none of its rows: the resumed
// run redoes it. A crash after leaves it "done" with all its rows: the resumed run skips it.
// Doing a step twice therefore never duplicates rows, and a step that keeps crashing the process
// shows as attempts > 1. Writes that must survive on their own (an LLM exchange, written by the
// client's hook as soon as the call returns, so its cost is never lost) are single-row inserts
// that commit immediately; an exchange carries the step key it was made for, so a resumed run can
// find a response that arrived before the crash instead of paying for it again.
//
// Durability: WAL journal, synchronous=FULL. A commit is on disk when Commit returns, so a power
// loss (not only a killed process) loses no finished step; at a few commits per iteration, each
// guarding minutes of LLM and GPU work, the fsync per commit costs nothing that matters.
//
// Thread-safety: a RunStore is one SQLite connection guarded by one (recursive) mutex; every
// method may be called from any thread (the LLM exchange hook writes from the client's threads).
// A Transaction holds that mutex from Begin until Commit/Rollback/destruction, so writes of other
// threads wait for it instead of landing inside it: keep transactions short and never wait on
// another thread that uses the store while holding one. Several processes may open the same
// database (WAL, busy timeout), but only one orchestrator should drive a run.
//
// The implementation: run_store_tables.h declares each table once, a list of its columns (name,
// SQL declaration, the record field it holds); columns.h makes the CREATE TABLE of each schema
// version, the INSERT, the UPDATE, the SELECT list and the reading of a row from such a list.
// run_store_schema.cc opens the database and creates or migrates the schema; run_store.cc holds
// transactions, every write and the step journal; run_store_reads.cc holds the lookups.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "store/run_layout.h"
#include "store/sqlite.h"

namespace kernelpro::store {

inline constexpr int kRunStoreSchemaVersion = 1;

struct RunStoreOptions {
  // How long a write waits for another connection's lock (another process on the same run
  // directory) before failing with Unavailable.
  std::chrono::milliseconds busy_timeout{10000};
  // Whether to create RUN_DIR (and its parents) and the database when missing. Off: a missing
  // database is NotFound (what `kernelpro resume` wants).
  bool create = true;
};

enum class RunStatus { kRunning, kFinished, kFailed };
const char* RunStatusName(RunStatus status);  // "running", "finished", "failed"

// Ids are the tables' INTEGER PRIMARY KEYs; 0 means "not stored yet". Times are milliseconds
// since the Unix epoch, set by the store when a row is written unless the record says otherwise.

struct RunRecord {
  std::int64_t id = 0;
  std::string problem_path;
  std::string problem_hash;  // of the problem file's text, to notice an edited problem on resume
  Json config = Json::object();
  RunStatus status = RunStatus::kRunning;
  std::string status_message;  // why it failed, or empty
  std::string kernelpro_version;
  std::optional<Json> reference_analysis;  // roofline ReferenceAnalysis JSON, once known
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

struct CandidateRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  int iteration = 0;
  std::string strategy;
  std::string source;
  std::string sha256;  // hex of the source's SHA-256; set by the store
  std::int64_t created_ms = 0;
};

// AddCandidate's answer: the candidate's id, and whether this call stored it (false: the same
// source was already stored, and `id` is that earlier row).
struct CandidateInsert {
  std::int64_t id = 0;
  bool inserted = false;
};

struct NodeRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::optional<std::int64_t> parent_id;  // unset for a root
  std::string kind;                       // "root", "candidate", ... (the search decides)
  std::string mode;                       // PromptMode: "initial", "debug", "optimize", or ""
  int iteration = 0;
  std::string status;  // EvalStatusName ("correct", "compile_error", ...) or "" before evaluation
  double reward = 0;
  std::optional<double> speedup;
  std::optional<double> speedup_lo;
  std::optional<double> speedup_hi;
  std::int64_t visits = 0;
  double total_reward = 0;
  bool terminal = false;
  std::optional<std::int64_t> candidate_id;
  std::int64_t created_ms = 0;
};

struct EvaluationRecord {
  std::int64_t id = 0;
  std::int64_t candidate_id = 0;
  std::string status;  // EvalStatusName
  std::string message;
  std::optional<double> speedup;
  std::optional<double> speedup_lo;
  std::optional<double> speedup_hi;
  std::optional<double> reference_ms;  // median time of the reference
  std::optional<double> candidate_ms;  // median time of the candidate
  double total_seconds = 0;            // harness time spent on this evaluation
  Json result = Json::object();        // ToJson(EvalResult)
  std::int64_t created_ms = 0;
};

struct MetricsRecord {
  std::int64_t id = 0;
  std::int64_t candidate_id = 0;
  Json metrics = Json::object();  // ToJson(Metrics)
  std::int64_t created_ms = 0;
};

struct ToolOutputRecord {
  std::int64_t id = 0;
  std::int64_t candidate_id = 0;
  Json analysis = Json::object();  // ToJson(tools::Analysis)
  std::string guidance;            // the rendered text the prompt carried
  std::int64_t created_ms = 0;
};

struct ProfileAnalysisRecord {
  std::int64_t id = 0;
  std::int64_t candidate_id = 0;
  std::string feedback_mode;  // FeedbackMode: "tools", "reactive", "raw", "none"
  std::string bottleneck;     // copied from the analysis, for reports
  std::string severity;
  Json analysis = Json::object();  // ToJson(ProfileAnalysis)
  std::string feedback;            // the text handed to the programmer
  std::int64_t created_ms = 0;
};

struct LlmExchangeRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  int iteration = 0;
  std::string purpose;   // "programmer", "profiling", "memory", ...
  std::string step_key;  // StepKeyText of the journal step it was made for; "" when none
  std::string provider;
  std::string model;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  double cost_usd = 0;
  bool cost_known = false;
  double latency_ms = 0;
  int attempts = 1;
  Json request = Json::object();  // ToJson(llm::Request)
  std::optional<Json> response;   // ToJson(llm::Response) when it succeeded
  std::optional<Json> error;      // ToJson(llm::Error) when it failed
  std::int64_t started_ms = 0;    // when the first attempt began
  std::int64_t created_ms = 0;
};

// Sums over exchanges. `cost_complete` is false when any exchange's cost was unknown (then
// cost_usd is a lower bound).
struct LlmTotals {
  std::optional<int> iteration;  // unset for a whole run
  std::int64_t exchanges = 0;
  std::int64_t failures = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  double cost_usd = 0;
  bool cost_complete = true;
  double latency_ms = 0;
};

struct MemoryRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string section;  // MemorySection: "search_findings", ...
  std::string text;
  int iteration = 0;
  std::int64_t created_ms = 0;
};

// One journal entry's identity. `key` tells apart the instances of a step in one iteration
// ("candidate:42"); "" when there is one.
struct StepKey {
  std::int64_t run_id = 0;
  int iteration = 0;
  std::string step;
  std::string key;
};

enum class StepState { kStarted, kDone };

// How an LlmExchangeRecord names the step it was made for (its step_key): "step", or "step/key"
// when the key is not empty. The run and iteration are the exchange's own columns.
std::string StepKeyText(const StepKey& step);

struct StepRecord {
  std::int64_t id = 0;  // journal order
  StepKey key;
  StepState state = StepState::kStarted;
  int attempts = 0;               // times StartStep was called before it was done
  Json payload = Json::object();  // what the step produced (ids, choices), from RecordStep
  std::int64_t started_ms = 0;    // the latest start
  std::optional<std::int64_t> done_ms;
};

class RunStore;

// An open transaction (BEGIN IMMEDIATE ... COMMIT), or a SAVEPOINT when one is already open on the
// store. Rolled back when destroyed uncommitted. Holds the store's mutex for its whole life: use
// it on one thread, keep it short, and end it before the store is destroyed.
class Transaction {
 public:
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status Commit();
  Status Rollback();

 private:
  friend class RunStore;
  Transaction(RunStore* store, std::unique_lock<std::recursive_mutex> lock, int depth);
  Status End(bool commit);

  RunStore* store_ = nullptr;
  std::unique_lock<std::recursive_mutex> lock_;
  int depth_ = 0;  // 0: the outer transaction; >0: a savepoint inside it
  bool open_ = false;
};

class RunStore {
 public:
  // Opens RUN_DIR/run.db, creating it (and RUN_DIR) when missing and options.create. Sets WAL,
  // synchronous=FULL, foreign keys and the busy timeout; creates or migrates the schema (each
  // migration in one transaction). A database written by a newer kernelpro (higher schema
  // version) is refused with its rows left alone; so is a SQLite file that is not a run store.
  static Result<std::unique_ptr<RunStore>> Open(const std::string& run_dir,
                                                const RunStoreOptions& options = {});
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const { return path_; }
  // Hex SHA-256 of `text`, as stored in candidates.sha256.
  static std::string Sha256Hex(std::string_view text);

  // Begins a transaction (or a savepoint inside the one this thread has open).
  Result<Transaction> Begin();

  // ---- runs
  Result<std::int64_t> CreateRun(const RunRecord& run);
  Result<RunRecord> GetRun(std::int64_t run_id);
  Result<std::vector<RunRecord>> ListRuns();  // in id order
  Status SetRunStatus(std::int64_t run_id, RunStatus status, const std::string& message = "");
  Status SetReferenceAnalysis(std::int64_t run_id, const Json& analysis);

  // ---- candidates
  // Stores a source once per run: the same text again returns the first row's id.
  Result<CandidateInsert> AddCandidate(std::int64_t run_id, int iteration,
                                       const std::string& strategy, const std::string& source);
  Result<CandidateRecord> GetCandidate(std::int64_t candidate_id);  // NotFound when absent
  Result<std::optional<CandidateRecord>> FindCandidateByHash(std::int64_t run_id,
                                                             const std::string& sha256);

  // ---- nodes
  Result<std::int64_t> AddNode(const NodeRecord& node);
  // Rewrites every field of node.id but run_id and created_ms (backpropagation, evaluation).
  Status UpdateNode(const NodeRecord& node);
  Result<NodeRecord> GetNode(std::int64_t node_id);
  Result<std::vector<NodeRecord>> ListNodes(std::int64_t run_id);  // in id order
  // The correct node with the highest speedup (the earliest of equals); nullopt when none.
  Result<std::optional<NodeRecord>> BestCorrectNode(std::int64_t run_id);

  // ---- what was learnt about a candidate; "latest" is the last written
  Result<std::int64_t> AddEvaluation(const EvaluationRecord& evaluation);
  Result<std::optional<EvaluationRecord>> LatestEvaluation(std::int64_t candidate_id);
  Result<std::int64_t> AddMetrics(const MetricsRecord& metrics);
  Result<std::optional<MetricsRecord>> LatestMetrics(std::int64_t candidate_id);
  Result<std::int64_t> AddToolOutput(const ToolOutputRecord& output);
  Result<std::optional<ToolOutputRecord>> LatestToolOutput(std::int64_t candidate_id);
  Result<std::int64_t> AddProfileAnalysis(const ProfileAnalysisRecord& analysis);
  Result<std::optional<ProfileAnalysisRecord>> LatestProfileAnalysis(std::int64_t candidate_id);

  // ---- LLM exchanges
  Result<std::int64_t> AddLlmExchange(const LlmExchangeRecord& exchange);
  // In id order; all of the run's when `iteration` is unset.
  Result<std::vector<LlmExchangeRecord>> ListLlmExchanges(std::int64_t run_id,
                                                          std::optional<int> iteration = {});
  // The exchanges recorded for one journal step, in id order.
  Result<std::vector<LlmExchangeRecord>> ListLlmExchangesForStep(const StepKey& step);
  Result<LlmTotals> LlmTotalsForRun(std::int64_t run_id);
  // One entry per iteration that has exchanges, in iteration order.
  Result<std::vector<LlmTotals>> LlmTotalsByIteration(std::int64_t run_id);

  // ---- search memory
  Result<std::int64_t> AddMemoryEntry(const MemoryRecord& entry);
  Result<std::vector<MemoryRecord>> ListMemoryEntries(std::int64_t run_id);  // in insertion order

  // ---- step journal
  // Journals that the step began: inserts it as started with attempts 1, or counts one more
  // attempt of a step still started. A step already done is left as it is. Returns the row.
  Result<StepRecord> StartStep(const StepKey& step);
  // In one transaction: unless the step is already done, runs `write` (which writes the step's
  // rows through this store and returns its payload) and marks the step done with that payload.
  // A step already done is returned unchanged without calling `write`; a failing `write` rolls
  // everything back and its Status is returned. Works without a prior StartStep.
  Result<StepRecord> RecordStep(const StepKey& step,
                                const std::function<Result<Json>()>& write = nullptr);
  Result<std::optional<StepRecord>> GetStep(const StepKey& step);
  Result<std::vector<StepRecord>> StepsForIteration(std::int64_t run_id, int iteration);
  // Steps started and not done (what a killed run was doing), in journal order.
  Result<std::vector<StepRecord>> UnfinishedSteps(std::int64_t run_id);
  // The highest iteration with a journal entry; nullopt when the journal is empty.
  Result<std::optional<int>> LastJournaledIteration(std::int64_t run_id);

 private:
  friend class Transaction;
  RunStore(std::string path, SqlDatabase db) : path_(std::move(path)), db_(std::move(db)) {}
  Status Configure(const RunStoreOptions& options);
  Status Migrate();
  // Reads run `run_id`, lets `change` edit the record and writes it back, in one transaction.
  Status RewriteRun(std::int64_t run_id, const std::function<void(RunRecord&)>& change);

  std::string path_;
  std::recursive_mutex mutex_;
  SqlDatabase db_;             // guarded by mutex_
  int transaction_depth_ = 0;  // open transactions + savepoints; guarded by mutex_
};

}  // namespace kernelpro::store
