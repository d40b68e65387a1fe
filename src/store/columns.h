// A stored table declared once: a list of its columns, each with its name, its SQL declaration
// and the record field it holds (as cli/option_groups.h declares each option once). From that
// list the store makes everything that names the columns: the CREATE TABLE (and ALTER TABLE of a
// later schema version), the INSERT with its values, the UPDATE, the SELECT list and the reading
// of a row. A column added to the list is therefore created, written and read; there is no second
// list to forget it in.
//
//   inline constexpr Column<MetricsRecord> kMetricsColumns[] = {
//       {"candidate_id", "INTEGER NOT NULL REFERENCES candidates(id)",
//        &MetricsRecord::candidate_id},
//       {"metrics_json", "TEXT NOT NULL", &MetricsRecord::metrics},
//       {"created_ms", "INTEGER NOT NULL", &MetricsRecord::created_ms, Written::kCreated}};
//   inline constexpr Table<MetricsRecord> kMetricsTable = {"metrics", &MetricsRecord::id,
//                                                          kMetricsColumns};
//
// Every table starts with `id INTEGER PRIMARY KEY`, which the table names by its field only. A
// field's C++ type says how it is written and read (an optional is NULL when unset; Json is its
// text, and text that does not parse is the read's error); a column whose value is not a field
// as it stands (an enum stored by name, a field of a nested struct) gives its own two functions.
//
// Schema versions. Each column, index and table says in which version it came (`since`, 1 by
// default); migrating to version N creates the tables of N and adds the columns and indexes of N
// to older tables. Never edit `since` or an old declaration: a database written by an older
// kernelpro replays exactly the steps it lacks. A column added to an existing table needs a
// DEFAULT when it is NOT NULL (ALTER TABLE ADD COLUMN fills the old rows with it).
//
// Thread-safety: the tables are constants; the functions keep no state.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "store/row_reader.h"
#include "store/sqlite.h"

namespace kernelpro::store {

// A column's value as the store writes it. It owns its text (JSON text is made for the write).
using StoredValue = std::variant<std::nullptr_t, std::int64_t, double, std::string>;

// The record field a column holds; its type says how it is written and read.
template <typename Record>
using FieldOf =
    std::variant<std::monostate, std::int64_t Record::*, int Record::*, double Record::*,
                 bool Record::*, std::string Record::*, std::optional<std::int64_t> Record::*,
                 std::optional<double> Record::*, Json Record::*, std::optional<Json> Record::*>;

// What an insert and an update write into a column.
enum class Written {
  kValue,    // the record's value, on insert and update
  kFixed,    // the record's value on insert; an update leaves it (the run a node belongs to)
  kCreated,  // insert: the record's time, or now when it has none; an update leaves it
  kNow,      // insert: now, whatever the record says; an update leaves it
  kUpdated,  // insert: the record's time, or now when it has none; update: now
};

template <typename Record>
struct Column {
  // A column that is not a field as it stands: how its value is made from the record, and how a
  // read value goes into the record (a Status that is not ok ends the read: a value the record
  // cannot hold). A null `read`: the column is written only.
  using Write = StoredValue (*)(const Record&);
  using Read = Status (*)(RowReader&, RowReader::Column, Record&);

  constexpr Column(const char* name, const char* declaration, FieldOf<Record> field,
                   Written written = Written::kValue, int since = 1)
      : name(name), declaration(declaration), field(field), written(written), since(since) {}
  constexpr Column(const char* name, const char* declaration, Write write, Read read, int since = 1)
      : name(name), declaration(declaration), write(write), read(read), since(since) {}

  const char* name;
  const char* declaration;  // type and constraints: "INTEGER NOT NULL REFERENCES runs(id)"
  FieldOf<Record> field;    // monostate for a column with its own write and read
  Write write = nullptr;
  Read read = nullptr;
  Written written = Written::kValue;
  int since = 1;  // the schema version that added it
};

// CREATE INDEX <name> ON <table>(<columns>).
struct Index {
  const char* name;
  const char* columns;  // "run_id, status"
  int since = 1;
};

template <typename Record>
struct Table {
  const char* name;
  std::int64_t Record::*id;  // the INTEGER PRIMARY KEY, the first column
  std::span<const Column<Record>> columns;
  const char* constraints = nullptr;  // after the columns: "UNIQUE (run_id, sha256)"
  std::span<const Index> indexes = {};
  int since = 1;  // the schema version that created it
};

// A table without its record type: what the schema is made of.
struct ColumnShape {
  const char* name;
  const char* declaration;
  int since;
};
struct TableShape {
  const char* name;
  std::vector<ColumnShape> columns;  // without the id
  const char* constraints;
  std::span<const Index> indexes;
  int since;
};

template <typename Record>
TableShape ShapeOf(const Table<Record>& table) {
  TableShape shape{table.name, {}, table.constraints, table.indexes, table.since};
  for (const Column<Record>& column : table.columns) {
    shape.columns.push_back({column.name, column.declaration, column.since});
  }
  return shape;
}

// The SQL that takes a database of schema version `version` - 1 to `version`: the CREATE TABLE
// of the tables that came in `version` (with the columns they have there), the ALTER TABLE ADD
// COLUMN of the columns that came in it to older tables, and the indexes that came in it.
std::string SchemaStepSql(std::span<const TableShape> tables, int version);

// How each field type is written and read.
StoredValue ToStored(std::int64_t value);
StoredValue ToStored(int value);
StoredValue ToStored(double value);
StoredValue ToStored(bool value);
StoredValue ToStored(const std::string& value);
StoredValue ToStored(const std::optional<std::int64_t>& value);
StoredValue ToStored(const std::optional<double>& value);
StoredValue ToStored(const Json& value);
StoredValue ToStored(const std::optional<Json>& value);
void ReadField(RowReader& row, RowReader::Column column, std::int64_t& field);
void ReadField(RowReader& row, RowReader::Column column, int& field);
void ReadField(RowReader& row, RowReader::Column column, double& field);
void ReadField(RowReader& row, RowReader::Column column, bool& field);
void ReadField(RowReader& row, RowReader::Column column, std::string& field);
void ReadField(RowReader& row, RowReader::Column column, std::optional<std::int64_t>& field);
void ReadField(RowReader& row, RowReader::Column column, std::optional<double>& field);
void ReadField(RowReader& row, RowReader::Column column, Json& field);
void ReadField(RowReader& row, RowReader::Column column, std::optional<Json>& field);

// Runs `sql` (no rows) with `values` bound to its parameters in order.
Status ExecuteStored(SqlDatabase& db, std::string_view sql, const std::vector<StoredValue>& values);

// The value `column` holds for `record`, as its own function or its field makes it.
template <typename Record>
StoredValue StoredValueOf(const Column<Record>& column, const Record& record) {
  if (column.write != nullptr) return column.write(record);
  return std::visit(
      [&](auto field) -> StoredValue {
        if constexpr (std::is_same_v<decltype(field), std::monostate>) {
          return nullptr;
        } else {
          return ToStored(record.*field);
        }
      },
      column.field);
}

// The value of a time column: the record's, or `now_ms` when it has none (0).
inline StoredValue TimeOr(StoredValue value, std::int64_t now_ms) {
  const auto* ms = std::get_if<std::int64_t>(&value);
  return ms != nullptr && *ms != 0 ? value : StoredValue(now_ms);
}

// "id, a, b": every column of the table, for a SELECT.
template <typename Record>
std::string SelectList(const Table<Record>& table) {
  std::string list = "id";
  for (const Column<Record>& column : table.columns) list += std::string(", ") + column.name;
  return list;
}

// Inserts `record` as a new row (its id is the database's choice); `tail` follows the VALUES
// (an ON CONFLICT clause). `now_ms` is the time of the write.
template <typename Record>
Status InsertRow(SqlDatabase& db, const Table<Record>& table, const Record& record,
                 std::int64_t now_ms, std::string_view tail = {}) {
  std::string names;
  std::string marks;
  std::vector<StoredValue> values;
  for (const Column<Record>& column : table.columns) {
    names += std::string(names.empty() ? "" : ", ") + column.name;
    marks += marks.empty() ? "?" : ", ?";
    StoredValue value = StoredValueOf(column, record);
    if (column.written == Written::kCreated || column.written == Written::kUpdated) {
      value = TimeOr(std::move(value), now_ms);
    } else if (column.written == Written::kNow) {
      value = now_ms;
    }
    values.push_back(std::move(value));
  }
  std::string sql = std::string("INSERT INTO ") + table.name + " (" + names + ") VALUES (" + marks +
                    ")" + (tail.empty() ? "" : " ") + std::string(tail);
  return ExecuteStored(db, sql, values);
}

// Rewrites the row with the record's id: every column an update writes (kValue; kUpdated as now).
template <typename Record>
Status UpdateRow(SqlDatabase& db, const Table<Record>& table, const Record& record,
                 std::int64_t now_ms) {
  std::string assignments;
  std::vector<StoredValue> values;
  for (const Column<Record>& column : table.columns) {
    if (column.written != Written::kValue && column.written != Written::kUpdated) continue;
    assignments += std::string(assignments.empty() ? "" : ", ") + column.name + " = ?";
    values.push_back(column.written == Written::kUpdated ? StoredValue(now_ms)
                                                         : StoredValueOf(column, record));
  }
  values.push_back(record.*table.id);
  return ExecuteStored(
      db, std::string("UPDATE ") + table.name + " SET " + assignments + " WHERE id = ?", values);
}

// The statement's current row (selected with SelectList) as a record. A column the statement
// lacks or JSON that does not parse is an Internal error naming it.
template <typename Record>
Result<Record> ReadRow(const Table<Record>& table, const SqlStatement& statement) {
  RowReader row(statement, table.name);
  Record record;
  ReadField(row, "id", record.*table.id);
  for (const Column<Record>& column : table.columns) {
    if (column.read != nullptr) {
      if (Status read = column.read(row, column.name, record); !read.ok()) return read;
      continue;
    }
    std::visit(
        [&](auto field) {
          if constexpr (!std::is_same_v<decltype(field), std::monostate>) {
            ReadField(row, column.name, record.*field);
          }
        },
        column.field);
  }
  if (!row.ok()) return row.status();
  return record;
}

}  // namespace kernelpro::store
