// Writing a run store: transactions and savepoints, every insert and update of a row (made from
// the tables of run_store_tables.h), and the step journal, whose RecordStep commits a step's rows
// together with its "done" mark (the resume protocol in run_store.h). Opening and the schema are
// in run_store_schema.cc; the lookups that read rows back are in run_store_reads.cc.
#include "store/run_store.h"

#include <string>
#include <utility>

#include "core/hash.h"
#include "store/run_store_tables.h"

namespace kernelpro::store {

namespace {

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Inserts `record` into `table`; the new row's id.
template <typename Record>
Result<std::int64_t> Insert(SqlDatabase& db, const Table<Record>& table, const Record& record) {
  if (Status status = InsertRow(db, table, record, NowMs()); !status.ok()) return status;
  return db.LastInsertRowId();
}

// Rewrites the row with the record's id; NotFound with `missing` when there is none.
template <typename Record>
Status UpdateOne(SqlDatabase& db, const Table<Record>& table, const Record& record,
                 const std::string& missing) {
  if (Status status = UpdateRow(db, table, record, NowMs()); !status.ok()) return status;
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

const char* RunStatusName(RunStatus status) { return NameOf(kRunStatusNames, status); }

Result<std::int64_t> RunStore::CreateRun(const RunRecord& run) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kRunsTable, run);
}

Status RunStore::RewriteRun(std::int64_t run_id, const std::function<void(RunRecord&)>& change) {
  std::lock_guard lock(mutex_);
  const std::string missing = "no run " + std::to_string(run_id);
  Result<Transaction> transaction = Begin();
  if (!transaction.ok()) return transaction.status();
  Result<RunRecord> run = GetRun(run_id);
  if (!run.ok()) {
    return run.status().code() == Status::Code::kNotFound ? Status::NotFound(missing)
                                                          : run.status();
  }
  change(*run);
  if (Status updated = UpdateOne(db_, kRunsTable, *run, missing); !updated.ok()) return updated;
  return transaction->Commit();
}

Status RunStore::SetRunStatus(std::int64_t run_id, RunStatus status, const std::string& message) {
  return RewriteRun(run_id, [&](RunRecord& run) {
    run.status = status;
    run.status_message = message;
  });
}

Status RunStore::SetReferenceAnalysis(std::int64_t run_id, const Json& analysis) {
  return RewriteRun(run_id, [&](RunRecord& run) { run.reference_analysis = analysis; });
}

// ---- candidates -----------------------------------------------------------------------------

Result<CandidateInsert> RunStore::AddCandidate(std::int64_t run_id, int iteration,
                                               const std::string& strategy,
                                               const std::string& source) {
  std::lock_guard lock(mutex_);
  const CandidateRecord candidate = {0, run_id, iteration, strategy, source, Sha256Hex(source), 0};
  Status inserted = InsertRow(db_, kCandidatesTable, candidate, NowMs(),
                              "ON CONFLICT (run_id, sha256) DO NOTHING");
  if (!inserted.ok()) return inserted;
  if (db_.Changes() == 1) return CandidateInsert{db_.LastInsertRowId(), true};
  // Under the mutex, with no delete anywhere, the conflicting row is still there.
  Result<std::optional<CandidateRecord>> existing = FindCandidateByHash(run_id, candidate.sha256);
  if (!existing.ok()) return existing.status();
  if (!*existing) {
    return Status::Internal("candidate " + candidate.sha256 + " conflicted but is not stored");
  }
  return CandidateInsert{(*existing)->id, false};
}

// ---- nodes ----------------------------------------------------------------------------------

Result<std::int64_t> RunStore::AddNode(const NodeRecord& node) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kNodesTable, node);
}

Status RunStore::UpdateNode(const NodeRecord& node) {
  std::lock_guard lock(mutex_);
  return UpdateOne(db_, kNodesTable, node, "no node " + std::to_string(node.id));
}

// ---- what was learnt about a candidate ------------------------------------------------------

Result<std::int64_t> RunStore::AddEvaluation(const EvaluationRecord& evaluation) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kEvaluationsTable, evaluation);
}

Result<std::int64_t> RunStore::AddMetrics(const MetricsRecord& metrics) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kMetricsTable, metrics);
}

Result<std::int64_t> RunStore::AddToolOutput(const ToolOutputRecord& output) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kToolOutputsTable, output);
}

Result<std::int64_t> RunStore::AddProfileAnalysis(const ProfileAnalysisRecord& analysis) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kProfileAnalysesTable, analysis);
}

// ---- LLM exchanges --------------------------------------------------------------------------

Result<std::int64_t> RunStore::AddLlmExchange(const LlmExchangeRecord& exchange) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kLlmExchangesTable, exchange);
}

// ---- memory ---------------------------------------------------------------------------------

Result<std::int64_t> RunStore::AddMemoryEntry(const MemoryRecord& entry) {
  std::lock_guard lock(mutex_);
  return Insert(db_, kMemoryEntriesTable, entry);
}

// ---- step journal ---------------------------------------------------------------------------

Result<StepRecord> RunStore::StartStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  Result<Transaction> transaction = Begin();
  if (!transaction.ok()) return transaction.status();
  const std::int64_t now = NowMs();
  const StepRecord started = {0, step, StepState::kStarted, 1, Json::object(), now, std::nullopt};
  Status status = InsertRow(db_, kStepsTable, started, now,
                            "ON CONFLICT (run_id, iteration, step, key) DO UPDATE "
                            "SET attempts = attempts + 1, started_ms = excluded.started_ms "
                            "WHERE state = 'started'");
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
  const StepRecord done = {0, step, StepState::kDone, 1, std::move(payload), now, now};
  Status status = InsertRow(db_, kStepsTable, done, now,
                            "ON CONFLICT (run_id, iteration, step, key) DO UPDATE "
                            "SET state = excluded.state, payload_json = excluded.payload_json, "
                            "done_ms = excluded.done_ms");
  if (!status.ok()) return status;
  return CommitJournaled(GetStep(step), *transaction, step);
}

}  // namespace kernelpro::store
