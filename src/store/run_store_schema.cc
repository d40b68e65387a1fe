// Opening a run store: the migrations that create and upgrade its schema (made from the tables
// of run_store_tables.h), and the connection settings (WAL, synchronous=FULL, foreign keys, busy
// timeout) that RunStore::Open applies before any row is read or written. The rows themselves are
// written in run_store.cc and read in run_store_reads.cc.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "store/run_layout.h"
#include "store/run_store.h"
#include "store/run_store_tables.h"

namespace kernelpro::store {

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
  // Migration to version n is what the tables declare as added in n (columns.h): a database
  // written by an older kernelpro replays exactly the steps it lacks.
  const std::vector<TableShape> shapes = RunStoreTables();
  for (int next = version; next < kRunStoreSchemaVersion; ++next) {
    Status applied = db_.Execute(SchemaStepSql(shapes, next + 1));
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
