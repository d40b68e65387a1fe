#include "store/sqlite.h"

#include <sqlite3.h>

#include <utility>

namespace kernelpro::store {

namespace {

// The head of a statement's text, enough to recognise it in an error message.
std::string SqlHead(std::string_view sql) {
  constexpr std::size_t kMaxChars = 60;
  std::string head;
  bool blank = false;
  for (char c : sql) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space) {
      blank = !head.empty();
      continue;
    }
    if (blank) head += ' ';
    blank = false;
    head += c;
    if (head.size() >= kMaxChars) return head + "...";
  }
  return head;
}

Status StatusWithCode(int rc, std::string message) {
  switch (rc & 0xff) {  // the primary code of an extended one
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(message));
    case SQLITE_CONSTRAINT:
      return Status::InvalidArgument(std::move(message));
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_FULL:
      return Status::IoError(std::move(message));
    default:
      return Status::Internal(std::move(message));
  }
}

}  // namespace

SqlValue NullableReal(const std::optional<double>& value) {
  if (!value) return nullptr;
  return *value;
}

SqlValue NullableInteger(const std::optional<std::int64_t>& value) {
  if (!value) return nullptr;
  return *value;
}

Status SqlError(sqlite3* db, int rc, std::string_view context) {
  std::string message(context);
  message += ": ";
  // sqlite3_errmsg describes the connection's last error, which is `rc` only when a call on `db`
  // produced it; sqlite3_errstr always matches the code.
  const char* detail =
      db != nullptr && sqlite3_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += detail != nullptr ? detail : "unknown SQLite error";
  return StatusWithCode(rc, std::move(message));
}

// ---- SqlStatement ---------------------------------------------------------------------------

SqlStatement::SqlStatement(sqlite3* db, sqlite3_stmt* statement, std::string_view sql)
    : db_(db), statement_(statement), sql_(SqlHead(sql)) {}

SqlStatement::SqlStatement(SqlStatement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      statement_(std::exchange(other.statement_, nullptr)),
      sql_(std::move(other.sql_)) {}

SqlStatement& SqlStatement::operator=(SqlStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    db_ = std::exchange(other.db_, nullptr);
    statement_ = std::exchange(other.statement_, nullptr);
    sql_ = std::move(other.sql_);
  }
  return *this;
}

SqlStatement::~SqlStatement() { sqlite3_finalize(statement_); }

Status SqlStatement::Error(int rc, std::string_view what) const {
  return SqlError(db_, rc, std::string(what) + " '" + sql_ + "'");
}

Status SqlStatement::Bind(std::initializer_list<SqlValue> values) {
  return Bind(std::span<const SqlValue>(values.begin(), values.size()));
}

Status SqlStatement::Bind(std::span<const SqlValue> values) {
  int index = 1;
  for (const SqlValue& value : values) {
    int rc = SQLITE_OK;
    if (std::holds_alternative<std::nullptr_t>(value)) {
      rc = sqlite3_bind_null(statement_, index);
    } else if (const auto* integer = std::get_if<std::int64_t>(&value)) {
      rc = sqlite3_bind_int64(statement_, index, *integer);
    } else if (const auto* real = std::get_if<double>(&value)) {
      rc = sqlite3_bind_double(statement_, index, *real);
    } else {
      const std::string_view text = std::get<std::string_view>(value);
      rc = sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                               SQLITE_UTF8);
    }
    if (rc != SQLITE_OK) return Error(rc, "binding parameter " + std::to_string(index) + " of");
    ++index;
  }
  return Status::Ok();
}

Result<bool> SqlStatement::Step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(rc, "running");
}

Status SqlStatement::Run() {
  Result<bool> row = Step();
  if (!row.ok()) return row.status();
  if (*row) return Status::Internal("'" + sql_ + "' returned a row where none was expected");
  return Status::Ok();
}

int SqlStatement::ColumnCount() const { return sqlite3_column_count(statement_); }

std::string_view SqlStatement::ColumnName(int column) const {
  const char* name = sqlite3_column_name(statement_, column);  // null when out of range
  return name != nullptr ? std::string_view(name) : std::string_view();
}

bool SqlStatement::IsNull(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

std::int64_t SqlStatement::Integer(int column) const {
  return sqlite3_column_int64(statement_, column);
}

double SqlStatement::Real(int column) const { return sqlite3_column_double(statement_, column); }

std::string SqlStatement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)));
}

std::optional<std::int64_t> SqlStatement::OptionalInteger(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Integer(column);
}

std::optional<double> SqlStatement::OptionalReal(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Real(column);
}

// ---- SqlDatabase ----------------------------------------------------------------------------

Result<SqlDatabase> SqlDatabase::Open(const std::string& path, bool create) {
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  SqlDatabase db(raw);  // closes the handle even when opening failed
  if (rc != SQLITE_OK) return SqlError(raw, rc, "cannot open " + path);
  // Extended codes tell SQLITE_IOERR_WRITE from SQLITE_IOERR_FSYNC in messages; SqlError masks.
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

SqlDatabase::SqlDatabase(SqlDatabase&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

SqlDatabase& SqlDatabase::operator=(SqlDatabase&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

SqlDatabase::~SqlDatabase() { sqlite3_close_v2(db_); }

Status SqlDatabase::Execute(std::string_view sql) {
  const std::string text(sql);  // sqlite3_exec wants a terminated string
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string message = "running '" + SqlHead(sql) + "': ";
  message += error != nullptr ? error : sqlite3_errstr(rc);
  sqlite3_free(error);
  return StatusWithCode(rc, std::move(message));
}

Status SqlDatabase::Execute(std::string_view sql, std::initializer_list<SqlValue> values) {
  return Execute(sql, std::span<const SqlValue>(values.begin(), values.size()));
}

Status SqlDatabase::Execute(std::string_view sql, std::span<const SqlValue> values) {
  Result<SqlStatement> statement = Prepare(sql);
  if (!statement.ok()) return statement.status();
  if (Status bound = statement->Bind(values); !bound.ok()) return bound;
  return statement->Run();
}

Result<SqlStatement> SqlDatabase::Prepare(std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  SqlStatement statement(db_, raw, sql);
  if (rc != SQLITE_OK) return SqlError(db_, rc, "preparing '" + SqlHead(sql) + "'");
  return statement;
}

std::int64_t SqlDatabase::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int SqlDatabase::Changes() const { return sqlite3_changes(db_); }

bool SqlDatabase::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

}  // namespace kernelpro::store
