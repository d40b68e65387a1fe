#include "store/run_store.h"

#include <unistd.h>

#include <array>
#include <filesystem>
#include <system_error>
#include <utility>

#include "core/enum_names.h"
#include "core/hash.h"

namespace kernelpro::store {

namespace {

// ---- schema ---------------------------------------------------------------------------------

// Migration i takes a database from schema version i to i + 1; the schema version of this build
// is the number of migrations. A new version appends one entry, never edits an old one: a
// database written by an older kernelpro replays exactly the steps it lacks.
constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  problem_path TEXT NOT NULL,
  problem_hash TEXT NOT NULL,
  config_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  status_message TEXT NOT NULL DEFAULT '',
  kernelpro_version TEXT NOT NULL,
  reference_analysis_json TEXT
);

CREATE TABLE candidates (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  iteration INTEGER NOT NULL,
  strategy TEXT NOT NULL,
  source TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  UNIQUE (run_id, sha256)
);

CREATE TABLE nodes (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  parent_id INTEGER REFERENCES nodes(id),
  kind TEXT NOT NULL,
  mode TEXT NOT NULL,
  iteration INTEGER NOT NULL,
  status TEXT NOT NULL,
  reward REAL NOT NULL,
  speedup REAL,
  speedup_lo REAL,
  speedup_hi REAL,
  visits INTEGER NOT NULL,
  total_reward REAL NOT NULL,
  terminal INTEGER NOT NULL,
  candidate_id INTEGER REFERENCES candidates(id),
  created_ms INTEGER NOT NULL
);
CREATE INDEX nodes_by_run ON nodes(run_id, status);
CREATE INDEX nodes_by_parent ON nodes(parent_id);

CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL REFERENCES candidates(id),
  status TEXT NOT NULL,
  message TEXT NOT NULL,
  speedup REAL,
  speedup_lo REAL,
  speedup_hi REAL,
  reference_ms REAL,
  candidate_ms REAL,
  total_seconds REAL NOT NULL,
  result_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX evaluations_by_candidate ON evaluations(candidate_id);

CREATE TABLE metrics (
  id INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL REFERENCES candidates(id),
  metrics_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX metrics_by_candidate ON metrics(candidate_id);

CREATE TABLE tool_outputs (
  id INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL REFERENCES candidates(id),
  analysis_json TEXT NOT NULL,
  guidance TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX tool_outputs_by_candidate ON tool_outputs(candidate_id);

CREATE TABLE profile_analyses (
  id INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL REFERENCES candidates(id),
  feedback_mode TEXT NOT NULL,
  bottleneck TEXT NOT NULL,
  severity TEXT NOT NULL,
  analysis_json TEXT NOT NULL,
  feedback TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX profile_analyses_by_candidate ON profile_analyses(candidate_id);

CREATE TABLE llm_exchanges (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  iteration INTEGER NOT NULL,
  purpose TEXT NOT NULL,
  step_key TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  ok INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  cost_known INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  attempts INTEGER NOT NULL,
  request_json TEXT NOT NULL,
  response_json TEXT,
  error_json TEXT,
  started_ms INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX llm_exchanges_by_iteration ON llm_exchanges(run_id, iteration);

CREATE TABLE memory_entries (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  section TEXT NOT NULL,
  text TEXT NOT NULL,
  iteration INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX memory_entries_by_run ON memory_entries(run_id);

CREATE TABLE steps (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  iteration INTEGER NOT NULL,
  step TEXT NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('started', 'done')),
  attempts INTEGER NOT NULL,
  payload_json TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  done_ms INTEGER,
  UNIQUE (run_id, iteration, step, key)
);
)sql";

constexpr std::array<std::string_view, 1> kMigrations = {kVersion1};
static_assert(kMigrations.size() == kRunStoreSchemaVersion,
              "kRunStoreSchemaVersion must be the number of migrations");

// ---- helpers --------------------------------------------------------------------------------

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A record's time, or now when it has none.
std::int64_t TimeOrNow(std::int64_t ms) { return ms != 0 ? ms : NowMs(); }

// Reads the JSON columns of one row. The first malformed one becomes the row's error, so that a
// row reader assigns every field and checks once at the end.
class JsonColumns {
 public:
  explicit JsonColumns(const SqlStatement& row) : row_(row) {}

  // The JSON text in `column` (`what` names it for the error); null when malformed.
  Json Read(int column, const char* what) {
    Json value = Json::parse(row_.Text(column), nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) return value;
    if (status_.ok()) {
      status_ = Status::Internal(std::string("the run store holds malformed JSON in ") + what);
    }
    return nullptr;
  }
  // As Read; a NULL column reads as none.
  std::optional<Json> ReadOptional(int column, const char* what) {
    if (row_.IsNull(column)) return std::nullopt;
    return Read(column, what);
  }

  const Status& status() const { return status_; }

 private:
  const SqlStatement& row_;
  Status status_;
};

// The runs table's status column: never rename.
constexpr std::array<std::pair<RunStatus, const char*>, 3> kRunStatusNames = {
    {{RunStatus::kRunning, "running"},
     {RunStatus::kFinished, "finished"},
     {RunStatus::kFailed, "failed"}}};

// Runs `statement` (prepared and bound, or why not) and reads every row with `read`.
template <typename Record>
Result<std::vector<Record>> ReadAll(Result<SqlStatement> statement,
                                    Result<Record> (*read)(const SqlStatement&)) {
  if (!statement.ok()) return statement.status();
  std::vector<Record> records;
  while (true) {
    Result<bool> row = statement->Step();
    if (!row.ok()) return row.status();
    if (!*row) return records;
    Result<Record> record = read(*statement);
    if (!record.ok()) return record.status();
    records.push_back(std::move(*record));
  }
}

// Runs `statement` (prepared and bound, or why not) and reads its first row, if any.
template <typename Record>
Result<std::optional<Record>> ReadFirst(Result<SqlStatement> statement,
                                        Result<Record> (*read)(const SqlStatement&)) {
  if (!statement.ok()) return statement.status();
  Result<bool> row = statement->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Record>();
  Result<Record> record = read(*statement);
  if (!record.ok()) return record.status();
  return std::optional<Record>(std::move(*record));
}

// ---- row readers: the column lists and the functions that read them go together --------------

constexpr const char* kRunColumns =
    "id, problem_path, problem_hash, config_json, status, status_message, kernelpro_version, "
    "reference_analysis_json, created_ms, updated_ms";

Result<RunRecord> ReadRun(const SqlStatement& row) {
  RunRecord run;
  JsonColumns json(row);
  run.id = row.Integer(0);
  run.problem_path = row.Text(1);
  run.problem_hash = row.Text(2);
  run.config = json.Read(3, "runs.config_json");
  const std::optional<RunStatus> status = ValueOf(kRunStatusNames, row.Text(4));
  if (!status) return Status::Internal("the run store holds an unknown run status");
  run.status = *status;
  run.status_message = row.Text(5);
  run.kernelpro_version = row.Text(6);
  run.reference_analysis = json.ReadOptional(7, "runs.reference_analysis_json");
  run.created_ms = row.Integer(8);
  run.updated_ms = row.Integer(9);
  if (!json.status().ok()) return json.status();
  return run;
}

constexpr const char* kCandidateColumns =
    "id, run_id, iteration, strategy, source, sha256, created_ms";

Result<CandidateRecord> ReadCandidate(const SqlStatement& row) {
  CandidateRecord candidate;
  candidate.id = row.Integer(0);
  candidate.run_id = row.Integer(1);
  candidate.iteration = static_cast<int>(row.Integer(2));
  candidate.strategy = row.Text(3);
  candidate.source = row.Text(4);
  candidate.sha256 = row.Text(5);
  candidate.created_ms = row.Integer(6);
  return candidate;
}

constexpr const char* kNodeColumns =
    "id, run_id, parent_id, kind, mode, iteration, status, reward, speedup, speedup_lo, "
    "speedup_hi, visits, total_reward, terminal, candidate_id, created_ms";

Result<NodeRecord> ReadNode(const SqlStatement& row) {
  NodeRecord node;
  node.id = row.Integer(0);
  node.run_id = row.Integer(1);
  node.parent_id = row.OptionalInteger(2);
  node.kind = row.Text(3);
  node.mode = row.Text(4);
  node.iteration = static_cast<int>(row.Integer(5));
  node.status = row.Text(6);
  node.reward = row.Real(7);
  node.speedup = row.OptionalReal(8);
  node.speedup_lo = row.OptionalReal(9);
  node.speedup_hi = row.OptionalReal(10);
  node.visits = row.Integer(11);
  node.total_reward = row.Real(12);
  node.terminal = row.Integer(13) != 0;
  node.candidate_id = row.OptionalInteger(14);
  node.created_ms = row.Integer(15);
  return node;
}

constexpr const char* kEvaluationColumns =
    "id, candidate_id, status, message, speedup, speedup_lo, speedup_hi, reference_ms, "
    "candidate_ms, total_seconds, result_json, created_ms";

Result<EvaluationRecord> ReadEvaluation(const SqlStatement& row) {
  EvaluationRecord evaluation;
  JsonColumns json(row);
  evaluation.id = row.Integer(0);
  evaluation.candidate_id = row.Integer(1);
  evaluation.status = row.Text(2);
  evaluation.message = row.Text(3);
  evaluation.speedup = row.OptionalReal(4);
  evaluation.speedup_lo = row.OptionalReal(5);
  evaluation.speedup_hi = row.OptionalReal(6);
  evaluation.reference_ms = row.OptionalReal(7);
  evaluation.candidate_ms = row.OptionalReal(8);
  evaluation.total_seconds = row.Real(9);
  evaluation.result = json.Read(10, "evaluations.result_json");
  evaluation.created_ms = row.Integer(11);
  if (!json.status().ok()) return json.status();
  return evaluation;
}

constexpr const char* kMetricsColumns = "id, candidate_id, metrics_json, created_ms";

Result<MetricsRecord> ReadMetrics(const SqlStatement& row) {
  MetricsRecord metrics;
  JsonColumns json(row);
  metrics.id = row.Integer(0);
  metrics.candidate_id = row.Integer(1);
  metrics.metrics = json.Read(2, "metrics.metrics_json");
  metrics.created_ms = row.Integer(3);
  if (!json.status().ok()) return json.status();
  return metrics;
}

constexpr const char* kToolOutputColumns = "id, candidate_id, analysis_json, guidance, created_ms";

Result<ToolOutputRecord> ReadToolOutput(const SqlStatement& row) {
  ToolOutputRecord output;
  JsonColumns json(row);
  output.id = row.Integer(0);
  output.candidate_id = row.Integer(1);
  output.analysis = json.Read(2, "tool_outputs.analysis_json");
  output.guidance = row.Text(3);
  output.created_ms = row.Integer(4);
  if (!json.status().ok()) return json.status();
  return output;
}

constexpr const char* kProfileAnalysisColumns =
    "id, candidate_id, feedback_mode, bottleneck, severity, analysis_json, feedback, created_ms";

Result<ProfileAnalysisRecord> ReadProfileAnalysis(const SqlStatement& row) {
  ProfileAnalysisRecord analysis;
  JsonColumns json(row);
  analysis.id = row.Integer(0);
  analysis.candidate_id = row.Integer(1);
  analysis.feedback_mode = row.Text(2);
  analysis.bottleneck = row.Text(3);
  analysis.severity = row.Text(4);
  analysis.analysis = json.Read(5, "profile_analyses.analysis_json");
  analysis.feedback = row.Text(6);
  analysis.created_ms = row.Integer(7);
  if (!json.status().ok()) return json.status();
  return analysis;
}

constexpr const char* kLlmExchangeColumns =
    "id, run_id, iteration, purpose, step_key, provider, model, input_tokens, output_tokens, "
    "cost_usd, cost_known, latency_ms, attempts, request_json, response_json, error_json, "
    "started_ms, created_ms";

Result<LlmExchangeRecord> ReadLlmExchange(const SqlStatement& row) {
  LlmExchangeRecord exchange;
  JsonColumns json(row);
  exchange.id = row.Integer(0);
  exchange.run_id = row.Integer(1);
  exchange.iteration = static_cast<int>(row.Integer(2));
  exchange.purpose = row.Text(3);
  exchange.step_key = row.Text(4);
  exchange.provider = row.Text(5);
  exchange.model = row.Text(6);
  exchange.input_tokens = row.Integer(7);
  exchange.output_tokens = row.Integer(8);
  exchange.cost_usd = row.Real(9);
  exchange.cost_known = row.Integer(10) != 0;
  exchange.latency_ms = row.Real(11);
  exchange.attempts = static_cast<int>(row.Integer(12));
  exchange.request = json.Read(13, "llm_exchanges.request_json");
  exchange.response = json.ReadOptional(14, "llm_exchanges.response_json");
  exchange.error = json.ReadOptional(15, "llm_exchanges.error_json");
  exchange.started_ms = row.Integer(16);
  exchange.created_ms = row.Integer(17);
  if (!json.status().ok()) return json.status();
  return exchange;
}

constexpr const char* kLlmTotalsColumns =
    "COUNT(*), COALESCE(SUM(ok = 0), 0), COALESCE(SUM(input_tokens), 0), "
    "COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_usd), 0.0), "
    "COALESCE(MIN(cost_known), 1), COALESCE(SUM(latency_ms), 0.0)";

Result<LlmTotals> ReadLlmTotals(const SqlStatement& row) {
  LlmTotals totals;
  totals.exchanges = row.Integer(0);
  totals.failures = row.Integer(1);
  totals.input_tokens = row.Integer(2);
  totals.output_tokens = row.Integer(3);
  totals.cost_usd = row.Real(4);
  totals.cost_complete = row.Integer(5) != 0;
  totals.latency_ms = row.Real(6);
  return totals;
}

Result<LlmTotals> ReadLlmTotalsWithIteration(const SqlStatement& row) {
  Result<LlmTotals> totals = ReadLlmTotals(row);
  if (totals.ok()) totals->iteration = static_cast<int>(row.Integer(7));
  return totals;
}

constexpr const char* kMemoryColumns = "id, run_id, section, text, iteration, created_ms";

Result<MemoryRecord> ReadMemory(const SqlStatement& row) {
  MemoryRecord entry;
  entry.id = row.Integer(0);
  entry.run_id = row.Integer(1);
  entry.section = row.Text(2);
  entry.text = row.Text(3);
  entry.iteration = static_cast<int>(row.Integer(4));
  entry.created_ms = row.Integer(5);
  return entry;
}

constexpr const char* kStepColumns =
    "id, run_id, iteration, step, key, state, attempts, payload_json, started_ms, done_ms";

Result<StepRecord> ReadStep(const SqlStatement& row) {
  StepRecord step;
  JsonColumns json(row);
  step.id = row.Integer(0);
  step.key.run_id = row.Integer(1);
  step.key.iteration = static_cast<int>(row.Integer(2));
  step.key.step = row.Text(3);
  step.key.key = row.Text(4);
  step.state = row.Text(5) == "done" ? StepState::kDone : StepState::kStarted;
  step.attempts = static_cast<int>(row.Integer(6));
  step.payload = json.Read(7, "steps.payload_json");
  step.started_ms = row.Integer(8);
  step.done_ms = row.OptionalInteger(9);
  if (!json.status().ok()) return json.status();
  return step;
}

// ---- statements: the few shapes every RunStore method takes ----------------------------------

// "SELECT <columns> <rest>" prepared, with `params` bound.
Result<SqlStatement> Select(SqlDatabase& db, const char* columns, const char* rest,
                            std::initializer_list<SqlValue> params) {
  Result<SqlStatement> statement = db.Prepare(std::string("SELECT ") + columns + " " + rest);
  if (!statement.ok()) return statement.status();
  if (Status bound = statement->Bind(params); !bound.ok()) return bound;
  return statement;
}

// The record a lookup by id found; NotFound with `missing` when there was none.
template <typename Record>
Result<Record> Found(Result<std::optional<Record>> record, const std::string& missing) {
  if (!record.ok()) return record.status();
  if (!*record) return Status::NotFound(missing);
  return std::move(**record);
}

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

const char* RunStatusName(RunStatus status) { return NameOf(kRunStatusNames, status); }

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

// ---- RunStore: opening ----------------------------------------------------------------------

Result<std::unique_ptr<RunStore>> RunStore::Open(const std::string& run_dir,
                                                 const RunStoreOptions& options) {
  namespace fs = std::filesystem;
  const std::string path = RunLayout(run_dir).store();
  std::error_code error;
  if (options.create) {
    fs::create_directories(run_dir, error);
    if (error) {
      return Status::IoError("cannot create the run directory " + run_dir + ": " + error.message());
    }
  } else if (!fs::exists(path, error)) {
    return Status::NotFound("no run store at " + path);
  }
  // SQLite's own message for an unwritable directory is "unable to open database file"; say which.
  if (options.create && !fs::exists(path, error) && access(run_dir.c_str(), W_OK) != 0) {
    return Status::IoError("cannot create the run store " + path + ": the run directory " +
                           run_dir + " is not writable");
  }
  Result<SqlDatabase> db = SqlDatabase::Open(path, options.create);
  if (!db.ok()) return db.status();
  std::unique_ptr<RunStore> store(new RunStore(path, std::move(*db)));
  if (Status configured = store->Configure(options); !configured.ok()) return configured;
  if (Status migrated = store->Migrate(); !migrated.ok()) return migrated;
  return store;
}

RunStore::~RunStore() = default;

Status RunStore::Configure(const RunStoreOptions& options) {
  std::lock_guard lock(mutex_);
  Status status =
      db_.Execute("PRAGMA busy_timeout = " + std::to_string(options.busy_timeout.count()));
  if (!status.ok()) return status;
  // The first statement that reads the file: one that is not a SQLite database fails here.
  Result<SqlStatement> journal = db_.Prepare("PRAGMA journal_mode = WAL");
  Result<bool> row = journal.ok() ? journal->Step() : Result<bool>(journal.status());
  if (!row.ok()) {
    return Status::IoError(path_ + " is not a usable SQLite database (" + row.status().message() +
                           ")");
  }
  const std::string mode = *row ? journal->Text(0) : "";
  if (mode != "wal") {
    return Status::IoError("cannot put " + path_ + " into WAL mode (journal mode stays '" + mode +
                           "'; the file system may not support it)");
  }
  // FULL: a commit is durable when it returns (see the header); NORMAL would survive a killed
  // process but could lose the last steps on power loss.
  status = db_.Execute("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
  if (!status.ok()) return status;
  return Status::Ok();
}

Status RunStore::Migrate() {
  Result<Transaction> transaction = Begin();
  if (!transaction.ok()) return transaction.status();
  // Version 0 is an empty database. Tables without schema_version are someone else's database.
  Result<SqlStatement> tables = db_.Prepare(
      "SELECT COUNT(*), COALESCE(SUM(name = 'schema_version'), 0) FROM sqlite_schema "
      "WHERE type = 'table'");
  if (!tables.ok()) return tables.status();
  Result<bool> row = tables->Step();
  if (!row.ok()) return row.status();
  const std::int64_t table_count = tables->Integer(0);
  const bool has_version_table = tables->Integer(1) != 0;
  int version = 0;
  if (has_version_table) {
    Result<SqlStatement> read = db_.Prepare("SELECT version FROM schema_version WHERE id = 1");
    if (!read.ok()) return read.status();
    Result<bool> found = read->Step();
    if (!found.ok()) return found.status();
    if (!*found) return Status::Internal(path_ + " has an empty schema_version table");
    version = static_cast<int>(read->Integer(0));
  } else if (table_count > 0) {
    return Status::InvalidArgument(path_ + " is a SQLite database but not a kernelpro run store " +
                                   "(it has no schema_version table)");
  }
  if (version > kRunStoreSchemaVersion) {
    return Status::InvalidArgument(
        path_ + " has run store schema version " + std::to_string(version) + ", newer than the " +
        std::to_string(kRunStoreSchemaVersion) + " this kernelpro understands; use a newer " +
        "kernelpro to read it");
  }
  if (version == kRunStoreSchemaVersion) return transaction->Commit();
  if (version == 0) {
    Status created = db_.Execute(
        "CREATE TABLE schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), "
        "version INTEGER NOT NULL); INSERT INTO schema_version (id, version) VALUES (1, 0)");
    if (!created.ok()) return created;
  }
  for (int next = version; next < kRunStoreSchemaVersion; ++next) {
    Status applied = db_.Execute(kMigrations[next]);
    if (!applied.ok()) {
      return Status::Internal("migrating " + path_ + " to schema version " +
                              std::to_string(next + 1) + ": " + applied.message());
    }
  }
  Status recorded = db_.Execute("UPDATE schema_version SET version = ? WHERE id = 1",
                                {std::int64_t{kRunStoreSchemaVersion}});
  if (!recorded.ok()) return recorded;
  return transaction->Commit();
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

Result<RunRecord> RunStore::GetRun(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return Found(ReadFirst(Select(db_, kRunColumns, "FROM runs WHERE id = ?", {run_id}), &ReadRun),
               "no run " + std::to_string(run_id) + " in " + path_);
}

Result<std::vector<RunRecord>> RunStore::ListRuns() {
  std::lock_guard lock(mutex_);
  return ReadAll(Select(db_, kRunColumns, "FROM runs ORDER BY id", {}), &ReadRun);
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

Result<CandidateRecord> RunStore::GetCandidate(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return Found(
      ReadFirst(Select(db_, kCandidateColumns, "FROM candidates WHERE id = ?", {candidate_id}),
                &ReadCandidate),
      "no candidate " + std::to_string(candidate_id));
}

Result<std::optional<CandidateRecord>> RunStore::FindCandidateByHash(std::int64_t run_id,
                                                                     const std::string& sha256) {
  std::lock_guard lock(mutex_);
  return ReadFirst(Select(db_, kCandidateColumns, "FROM candidates WHERE run_id = ? AND sha256 = ?",
                          {run_id, sha256}),
                   &ReadCandidate);
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

Result<NodeRecord> RunStore::GetNode(std::int64_t node_id) {
  std::lock_guard lock(mutex_);
  return Found(
      ReadFirst(Select(db_, kNodeColumns, "FROM nodes WHERE id = ?", {node_id}), &ReadNode),
      "no node " + std::to_string(node_id));
}

Result<std::vector<NodeRecord>> RunStore::ListNodes(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(Select(db_, kNodeColumns, "FROM nodes WHERE run_id = ? ORDER BY id", {run_id}),
                 &ReadNode);
}

Result<std::optional<NodeRecord>> RunStore::BestCorrectNode(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kNodeColumns,
             "FROM nodes WHERE run_id = ? AND status = 'correct' AND speedup IS NOT NULL "
             "ORDER BY speedup DESC, id ASC LIMIT 1",
             {run_id}),
      &ReadNode);
}

// ---- evaluations, metrics, tool outputs, profile analyses ------------------------------------

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

Result<std::optional<EvaluationRecord>> RunStore::LatestEvaluation(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kEvaluationColumns,
             "FROM evaluations WHERE candidate_id = ? ORDER BY id DESC LIMIT 1", {candidate_id}),
      &ReadEvaluation);
}

Result<std::int64_t> RunStore::AddMetrics(const MetricsRecord& metrics) {
  std::lock_guard lock(mutex_);
  return Insert(db_,
                "INSERT INTO metrics (candidate_id, metrics_json, created_ms) VALUES (?, ?, ?)",
                {metrics.candidate_id, DumpJson(metrics.metrics), TimeOrNow(metrics.created_ms)});
}

Result<std::optional<MetricsRecord>> RunStore::LatestMetrics(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kMetricsColumns, "FROM metrics WHERE candidate_id = ? ORDER BY id DESC LIMIT 1",
             {candidate_id}),
      &ReadMetrics);
}

Result<std::int64_t> RunStore::AddToolOutput(const ToolOutputRecord& output) {
  std::lock_guard lock(mutex_);
  return Insert(db_,
                "INSERT INTO tool_outputs (candidate_id, analysis_json, guidance, created_ms) "
                "VALUES (?, ?, ?, ?)",
                {output.candidate_id, DumpJson(output.analysis), output.guidance,
                 TimeOrNow(output.created_ms)});
}

Result<std::optional<ToolOutputRecord>> RunStore::LatestToolOutput(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kToolOutputColumns,
             "FROM tool_outputs WHERE candidate_id = ? ORDER BY id DESC LIMIT 1", {candidate_id}),
      &ReadToolOutput);
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

Result<std::optional<ProfileAnalysisRecord>> RunStore::LatestProfileAnalysis(
    std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(Select(db_, kProfileAnalysisColumns,
                          "FROM profile_analyses WHERE candidate_id = ? ORDER BY id DESC LIMIT 1",
                          {candidate_id}),
                   &ReadProfileAnalysis);
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

Result<std::vector<LlmExchangeRecord>> RunStore::ListLlmExchanges(std::int64_t run_id,
                                                                  std::optional<int> iteration) {
  std::lock_guard lock(mutex_);
  const SqlValue wanted = iteration ? SqlValue(std::int64_t{*iteration}) : SqlValue(nullptr);
  return ReadAll(Select(db_, kLlmExchangeColumns,
                        "FROM llm_exchanges WHERE run_id = ?1 AND (?2 IS NULL OR iteration = ?2) "
                        "ORDER BY id",
                        {run_id, wanted}),
                 &ReadLlmExchange);
}

Result<std::vector<LlmExchangeRecord>> RunStore::ListLlmExchangesForStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(db_, kLlmExchangeColumns,
             "FROM llm_exchanges WHERE run_id = ? AND iteration = ? AND step_key = ? ORDER BY id",
             {step.run_id, std::int64_t{step.iteration}, StepKeyText(step)}),
      &ReadLlmExchange);
}

Result<LlmTotals> RunStore::LlmTotalsForRun(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  Result<std::optional<LlmTotals>> totals =
      ReadFirst(Select(db_, kLlmTotalsColumns, "FROM llm_exchanges WHERE run_id = ?", {run_id}),
                &ReadLlmTotals);
  if (!totals.ok()) return totals.status();
  return totals->value_or(LlmTotals{});
}

Result<std::vector<LlmTotals>> RunStore::LlmTotalsByIteration(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(
          db_, kLlmTotalsColumns,
          ", iteration FROM llm_exchanges WHERE run_id = ? GROUP BY iteration ORDER BY iteration",
          {run_id}),
      &ReadLlmTotalsWithIteration);
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

Result<std::vector<MemoryRecord>> RunStore::ListMemoryEntries(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(db_, kMemoryColumns, "FROM memory_entries WHERE run_id = ? ORDER BY id", {run_id}),
      &ReadMemory);
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

Result<std::optional<StepRecord>> RunStore::GetStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  return ReadFirst(Select(db_, kStepColumns,
                          "FROM steps WHERE run_id = ? AND iteration = ? AND step = ? AND key = ?",
                          {step.run_id, std::int64_t{step.iteration}, step.step, step.key}),
                   &ReadStep);
}

Result<std::vector<StepRecord>> RunStore::StepsForIteration(std::int64_t run_id, int iteration) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(db_, kStepColumns, "FROM steps WHERE run_id = ? AND iteration = ? ORDER BY id",
             {run_id, std::int64_t{iteration}}),
      &ReadStep);
}

Result<std::vector<StepRecord>> RunStore::UnfinishedSteps(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(Select(db_, kStepColumns,
                        "FROM steps WHERE run_id = ? AND state = 'started' ORDER BY id", {run_id}),
                 &ReadStep);
}

Result<std::optional<int>> RunStore::LastJournaledIteration(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  Result<SqlStatement> statement =
      Select(db_, "MAX(iteration)", "FROM steps WHERE run_id = ?", {run_id});
  if (!statement.ok()) return statement.status();
  Result<bool> row = statement->Step();
  if (!row.ok()) return row.status();
  if (!*row || statement->IsNull(0)) return std::optional<int>();
  return std::optional<int>(static_cast<int>(statement->Integer(0)));
}

}  // namespace kernelpro::store
