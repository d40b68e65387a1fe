// Thin RAII wrappers over the SQLite C API: a connection (SqlDatabase) and a prepared statement
// (SqlStatement), with every failure turned into a Status that carries SQLite's own message.
//
// They exist so that no caller handles a raw sqlite3* or forgets a sqlite3_finalize, and so that
// each call site is one line: Prepare, Bind({...}), Step. Values are bound by copy
// (SQLITE_TRANSIENT), so a temporary std::string passed to Bind may die right after the call.
// sqlite3.h is not included here: code that only uses these wrappers does not need SQLite's
// headers.
//
// Thread-safety: none. A connection is opened without SQLite's own mutex (SQLITE_OPEN_NOMUTEX);
// its owner serialises every use of it and of its statements (RunStore does, with one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kernelpro::store {

// One bound parameter: NULL, an integer (bool and int convert to it), a real, or text.
using SqlValue = std::variant<std::nullptr_t, std::int64_t, double, std::string_view>;

// NULL when unset.
SqlValue NullableReal(const std::optional<double>& value);
SqlValue NullableInteger(const std::optional<std::int64_t>& value);

// A Status for the SQLite result code `rc` on `db`: "<context>: <sqlite3_errmsg>". Busy and locked
// map to Unavailable, constraint violations to InvalidArgument, I/O, permission and
// cannot-open errors to IoError, everything else to Internal.
Status SqlError(sqlite3* db, int rc, std::string_view context);

class SqlStatement {
 public:
  SqlStatement() = default;
  SqlStatement(SqlStatement&& other) noexcept;
  SqlStatement& operator=(SqlStatement&& other) noexcept;
  SqlStatement(const SqlStatement&) = delete;
  SqlStatement& operator=(const SqlStatement&) = delete;
  ~SqlStatement();

  // Binds parameters 1..n in order.
  Status Bind(std::initializer_list<SqlValue> values);
  Status Bind(std::span<const SqlValue> values);
  // Advances: true when a row is ready to read, false when the statement is done.
  Result<bool> Step();
  // Steps a statement that returns no rows (INSERT, UPDATE, ...) to its end.
  Status Run();

  // The result columns: how many, and each one's name (its AS alias, or the column's own name for
  // a plain column reference; RowReader finds columns by it). "" for an index out of range.
  int ColumnCount() const;
  std::string_view ColumnName(int column) const;

  // Column readers for the current row (0-based). NULL reads as 0 / "" / nullopt.
  bool IsNull(int column) const;
  std::int64_t Integer(int column) const;
  double Real(int column) const;
  std::string Text(int column) const;
  std::optional<std::int64_t> OptionalInteger(int column) const;
  std::optional<double> OptionalReal(int column) const;

 private:
  friend class SqlDatabase;
  SqlStatement(sqlite3* db, sqlite3_stmt* statement, std::string_view sql);
  Status Error(int rc, std::string_view what) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* statement_ = nullptr;
  std::string sql_;  // the start of the SQL text, for error messages
};

class SqlDatabase {
 public:
  // Opens (creating when `create`) the database file at `path`.
  static Result<SqlDatabase> Open(const std::string& path, bool create);

  SqlDatabase() = default;
  SqlDatabase(SqlDatabase&& other) noexcept;
  SqlDatabase& operator=(SqlDatabase&& other) noexcept;
  SqlDatabase(const SqlDatabase&) = delete;
  SqlDatabase& operator=(const SqlDatabase&) = delete;
  ~SqlDatabase();

  // Runs one or more ';'-separated statements without parameters (schema, BEGIN, PRAGMA).
  Status Execute(std::string_view sql);
  // Prepares, binds and runs one statement that returns no rows.
  Status Execute(std::string_view sql, std::initializer_list<SqlValue> values);
  Status Execute(std::string_view sql, std::span<const SqlValue> values);
  Result<SqlStatement> Prepare(std::string_view sql);

  std::int64_t LastInsertRowId() const;
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int Changes() const;
  // Whether a transaction is open on this connection.
  bool InTransaction() const;
  sqlite3* handle() const { return db_; }

 private:
  explicit SqlDatabase(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace kernelpro::store
