// Opening a run store: the schema, the migrations that create and upgrade it, and the connection
// settings (WAL, synchronous=FULL, foreign keys, busy timeout) that RunStore::Open applies before
// any row is read or written. The rows themselves are written in run_store.cc and read in
// run_store_reads.cc.
#include <unistd.h>

#include <array>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "store/run_layout.h"
#include "store/run_store.h"

namespace kernelpro::store {

namespace {

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

}  // namespace

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

}  // namespace kernelpro::store
