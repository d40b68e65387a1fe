// Writing a run store: transactions and savepoints, every insert and update of a row, and the
// step journal, whose RecordStep commits a step's rows together with its "done" mark (the resume
// protocol in run_store.h). Opening and the schema are in run_store_schema.cc; the lookups that
// read rows back are in run_store_reads.cc.
#include "store/run_store.h"

#include <string>
#include <utility>

#include "core/hash.h"

namespace kernelpro::store {

namespace {

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A record's time, or now when it has none.
std::int64_t TimeOrNow(std::int64_t ms) { return ms != 0 ? ms : NowMs(); }

// Runs an INSERT; the new row's id.
Result<std::int64_t> Insert(SqlDatabase& db, std::string_view sql,
                            std::initializer_list<SqlValue> values) {
  if (Status status = db.Execute(sql, values); !status.ok()) return status;
  return db.LastInsertRowId();
}

// Runs an UPDATE of one row by id; NotFound with `missing` when no row has that id.
Status UpdateOne(SqlDatabase& db, std::string_view sql, std::initializer_list<SqlValue> values,
                 const std::string& missing) {
  if (Status status = db.Execute(sql, values); !status.ok()) return status;
  if (db.Changes() == 0) return Status::NotFound(missing);
  return Status::Ok();
}

// A step just journaled, read back and committed with its transaction.
Result<StepRecord> CommitJournaled(Result<std::optional<StepRecord>> record,
                                   Transaction& transaction, const StepKey& step) {
  if (!record.ok()) return record.status();
  if (!*record) return Status::Internal("step " + step.step + " vanished after being journaled");
  if (Status committed = transaction.Commit(); !committed.ok()) return committed;
  return std::move(**record);
}

}  // namespace

std::string StepKeyText(const StepKey& step) {
  return step.key.empty() ? step.step : step.step + "/" + step.key;
}

// ---- Transaction ----------------------------------------------------------------------------

Transaction::Transaction(RunStore* store, std::unique_lock<std::recursive_mutex> lock, int depth)
    : store_(store), lock_(std::move(lock)), depth_(depth), open_(true) {}

Transaction::Transaction(Transaction&& other) noexcept
    : store_(other.store_),
      lock_(std::move(other.lock_)),
      depth_(other.depth_),
      open_(std::exchange(other.open_, false)) {}

Transaction::~Transaction() {
  if (open_) End(/*commit=*/false);  // a failed rollback leaves nothing better to do
}

Status Transaction::Commit() { return End(/*commit=*/true); }

Status Transaction::Rollback() { return End(/*commit=*/false); }

Status Transaction::End(bool commit) {
  if (!open_) return Status::InvalidArgument("the transaction is already committed or rolled back");
  open_ = false;
  SqlDatabase& db = store_->db_;
  --store_->transaction_depth_;
  Status status;
  if (depth_ == 0) {
    status = db.Execute(commit ? "COMMIT" : "ROLLBACK");
    // A COMMIT that failed may leave the transaction open (SQLITE_BUSY): end it, so the
    // connection is usable and nothing half-written survives.
    if (!status.ok() && db.InTransaction()) db.Execute("ROLLBACK");
  } else {
    const std::string name = "kp_savepoint_" + std::to_string(depth_);
    if (commit) status = db.Execute("RELEASE " + name);
    if (!commit || !status.ok()) {
      Status rolled_back = db.Execute("ROLLBACK TO " + name + "; RELEASE " + name);
      if (status.ok()) status = rolled_back;
    }
  }
  lock_.unlock();
  return status;
}

std::string RunStore::Sha256Hex(std::string_view text) { return ::kernelpro::Sha256Hex(text); }

Result<Transaction> RunStore::Begin() {
  std::unique_lock lock(mutex_);
  const int depth = transaction_depth_;
  Status status = depth == 0 ? db_.Execute("BEGIN IMMEDIATE")
                             : db_.Execute("SAVEPOINT kp_savepoint_" + std::to_string(depth));
  if (!status.ok()) return status;
  ++transaction_depth_;
  return Transaction(this, std::move(lock), depth);
}

// ---- runs -----------------------------------------------------------------------------------

Result<std::int64_t> RunStore::CreateRun(const RunRecord& run) {
  std::lock_guard lock(mutex_);
  const std::int64_t created = TimeOrNow(run.created_ms);
  const std::string config = DumpJson(run.config);
  const std::optional<std::string> reference =
      run.reference_analysis ? std::optional(DumpJson(*run.reference_analysis)) : std::nullopt;
  return Insert(
      db_,
      "INSERT INTO runs (created_ms, updated_ms, problem_path, problem_hash, config_json, status, "
      "status_message, kernelpro_version, reference_analysis_json) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {created, TimeOrNow(run.updated_ms), run.problem_path, run.problem_hash, config,
       RunStatusName(run.status), run.status_message, run.kernelpro_version,
       reference ? SqlValue(*reference) : SqlValue(nullptr)});
}

Status RunStore::SetRunStatus(std::int64_t run_id, RunStatus status, const std::string& message) {
  std::lock_guard lock(mutex_);
  return UpdateOne(
      db_, "UPDATE runs SET status = ?, status_message = ?, updated_ms = ? WHERE id = ?",
      {RunStatusName(status), message, NowMs(), run_id}, "no run " + std::to_string(run_id));
}

Status RunStore::SetReferenceAnalysis(std::int64_t run_id, const Json& analysis) {
  std::lock_guard lock(mutex_);
  return UpdateOne(db_, "UPDATE runs SET reference_analysis_json = ?, updated_ms = ? WHERE id = ?",
                   {DumpJson(analysis), NowMs(), run_id}, "no run " + std::to_string(run_id));
}

// ---- candidates -----------------------------------------------------------------------------

Result<CandidateInsert> RunStore::AddCandidate(std::int64_t run_id, int iteration,
                                               const std::string& strategy,
                                               const std::string& source) {
  std::lock_guard lock(mutex_);
  const std::string hash = Sha256Hex(source);
  Status inserted = db_.Execute(
      "INSERT INTO candidates (run_id, iteration, strategy, source, sha256, created_ms) "
      "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, sha256) DO NOTHING",
      {run_id, std::int64_t{iteration}, strategy, source, hash, NowMs()});
  if (!inserted.ok()) return inserted;
  if (db_.Changes() == 1) return CandidateInsert{db_.LastInsertRowId(), true};
  // Under the mutex, with no delete anywhere, the conflicting row is still there.
  Result<std::optional<CandidateRecord>> existing = FindCandidateByHash(run_id, hash);
  if (!existing.ok()) return existing.status();
  if (!*existing) return Status::Internal("candidate " + hash + " conflicted but is not stored");
  return CandidateInsert{(*existing)->id, false};
}

// ---- nodes ----------------------------------------------------------------------------------

Result<std::int64_t> RunStore::AddNode(const NodeRecord& node) {
  std::lock_guard lock(mutex_);
  return Insert(
      db_,
      "INSERT INTO nodes (run_id, parent_id, kind, mode, iteration, status, reward, speedup, "
      "speedup_lo, speedup_hi, visits, total_reward, terminal, candidate_id, created_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {node.run_id, NullableInteger(node.parent_id), node.kind, node.mode,
       std::int64_t{node.iteration}, node.status, node.reward, NullableReal(node.speedup),
       NullableReal(node.speedup_lo), NullableReal(node.speedup_hi), node.visits, node.total_reward,
       node.terminal, NullableInteger(node.candidate_id), TimeOrNow(node.created_ms)});
}

Status RunStore::UpdateNode(const NodeRecord& node) {
  std::lock_guard lock(mutex_);
  return UpdateOne(
      db_,
      "UPDATE nodes SET parent_id = ?, kind = ?, mode = ?, iteration = ?, status = ?, reward = ?, "
      "speedup = ?, speedup_lo = ?, speedup_hi = ?, visits = ?, total_reward = ?, terminal = ?, "
      "candidate_id = ? WHERE id = ?",
      {NullableInteger(node.parent_id), node.kind, node.mode, std::int64_t{node.iteration},
       node.status, node.reward, NullableReal(node.speedup), NullableReal(node.speedup_lo),
       NullableReal(node.speedup_hi), node.visits, node.total_reward, node.terminal,
       NullableInteger(node.candidate_id), node.id},
      "no node " + std::to_string(node.id));
}

// ---- what was learnt about a candidate ------------------------------------------------------

Result<std::int64_t> RunStore::AddEvaluation(const EvaluationRecord& evaluation) {
  std::lock_guard lock(mutex_);
  return Insert(
      db_,
      "INSERT INTO evaluations (candidate_id, status, message, speedup, speedup_lo, speedup_hi, "
      "reference_ms, candidate_ms, total_seconds, result_json, created_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {evaluation.candidate_id, evaluation.status, evaluation.message,
       NullableReal(evaluation.speedup), NullableReal(evaluation.speedup_lo),
       NullableReal(evaluation.speedup_hi), NullableReal(evaluation.reference_ms),
       NullableReal(evaluation.candidate_ms), evaluation.total_seconds, DumpJson(evaluation.result),
       TimeOrNow(evaluation.created_ms)});
}

Result<std::int64_t> RunStore::AddMetrics(const MetricsRecord& metrics) {
  std::lock_guard lock(mutex_);
  return Insert(db_,
                "INSERT INTO metrics (candidate_id, metrics_json, created_ms) VALUES (?, ?, ?)",
                {metrics.candidate_id, DumpJson(metrics.metrics), TimeOrNow(metrics.created_ms)});
}

Result<std::int64_t> RunStore::AddToolOutput(const ToolOutputRecord& output) {
  std::lock_guard lock(mutex_);
  return Insert(db_,
                "INSERT INTO tool_outputs (candidate_id, analysis_json, guidance, created_ms) "
                "VALUES (?, ?, ?, ?)",
                {output.candidate_id, DumpJson(output.analysis), output.guidance,
                 TimeOrNow(output.created_ms)});
}

Result<std::int64_t> RunStore::AddProfileAnalysis(const ProfileAnalysisRecord& analysis) {
  std::lock_guard lock(mutex_);
  return Insert(
      db_,
      "INSERT INTO profile_analyses (candidate_id, feedback_mode, bottleneck, severity, "
      "analysis_json, feedback, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
      {analysis.candidate_id, analysis.feedback_mode, analysis.bottleneck, analysis.severity,
       DumpJson(analysis.analysis), analysis.feedback, TimeOrNow(analysis.created_ms)});
}

// ---- LLM exchanges --------------------------------------------------------------------------

Result<std::int64_t> RunStore::AddLlmExchange(const LlmExchangeRecord& exchange) {
  std::lock_guard lock(mutex_);
  const std::optional<std::string> response =
      exchange.response ? std::optional(DumpJson(*exchange.response)) : std::nullopt;
  const std::optional<std::string> error =
      exchange.error ? std::optional(DumpJson(*exchange.error)) : std::nullopt;
  return Insert(
      db_,
      "INSERT INTO llm_exchanges (run_id, iteration, purpose, step_key, provider, model, ok, "
      "input_tokens, output_tokens, cost_usd, cost_known, latency_ms, attempts, request_json, "
      "response_json, error_json, started_ms, created_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {exchange.run_id, std::int64_t{exchange.iteration}, exchange.purpose, exchange.step_key,
       exchange.provider, exchange.model, !exchange.error.has_value(), exchange.input_tokens,
       exchange.output_tokens, exchange.cost_usd, exchange.cost_known, exchange.latency_ms,
       std::int64_t{exchange.attempts}, DumpJson(exchange.request),
       response ? SqlValue(*response) : SqlValue(nullptr),
       error ? SqlValue(*error) : SqlValue(nullptr), TimeOrNow(exchange.started_ms), NowMs()});
}

// ---- memory ---------------------------------------------------------------------------------

Result<std::int64_t> RunStore::AddMemoryEntry(const MemoryRecord& entry) {
  std::lock_guard lock(mutex_);
  return Insert(db_,
                "INSERT INTO memory_entries (run_id, section, text, iteration, created_ms) "
                "VALUES (?, ?, ?, ?, ?)",
                {entry.run_id, entry.section, entry.text, std::int64_t{entry.iteration},
                 TimeOrNow(entry.created_ms)});
}

// ---- step journal ---------------------------------------------------------------------------

Result<StepRecord> RunStore::StartStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  Result<Transaction> transaction = Begin();
  if (!transaction.ok()) return transaction.status();
  const std::int64_t now = NowMs();
  Status status = db_.Execute(
      "INSERT INTO steps (run_id, iteration, step, key, state, attempts, payload_json, "
      "started_ms) VALUES (?, ?, ?, ?, 'started', 1, '{}', ?) "
      "ON CONFLICT (run_id, iteration, step, key) DO UPDATE "
      "SET attempts = attempts + 1, started_ms = excluded.started_ms WHERE state = 'started'",
      {step.run_id, std::int64_t{step.iteration}, step.step, step.key, now});
  if (!status.ok()) return status;
  return CommitJournaled(GetStep(step), *transaction, step);
}

Result<StepRecord> RunStore::RecordStep(const StepKey& step,
                                        const std::function<Result<Json>()>& write) {
  std::lock_guard lock(mutex_);
  Result<Transaction> transaction = Begin();
  if (!transaction.ok()) return transaction.status();
  Result<std::optional<StepRecord>> existing = GetStep(step);
  if (!existing.ok()) return existing.status();
  if (*existing && (*existing)->state == StepState::kDone) {
    if (Status committed = transaction->Commit(); !committed.ok()) return committed;
    return std::move(**existing);
  }
  Json payload = Json::object();
  if (write) {
    Result<Json> written = write();
    if (!written.ok()) return written.status();  // the transaction rolls back
    payload = std::move(*written);
  }
  const std::int64_t now = NowMs();
  Status status = db_.Execute(
      "INSERT INTO steps (run_id, iteration, step, key, state, attempts, payload_json, "
      "started_ms, done_ms) VALUES (?, ?, ?, ?, 'done', 1, ?, ?, ?) "
      "ON CONFLICT (run_id, iteration, step, key) DO UPDATE "
      "SET state = 'done', payload_json = excluded.payload_json, done_ms = excluded.done_ms",
      {step.run_id, std::int64_t{step.iteration}, step.step, step.key, DumpJson(payload), now,
       now});
  if (!status.ok()) return status;
  return CommitJournaled(GetStep(step), *transaction, step);
}

}  // namespace kernelpro::store
