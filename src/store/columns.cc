#include "store/columns.h"

#include <utility>

namespace kernelpro::store {

namespace {

// "  name declaration" lines of a CREATE TABLE, as the version-1 schema was written by hand.
std::string CreateTableSql(const TableShape& table, int version) {
  std::string sql = std::string("CREATE TABLE ") + table.name + " (\n  id INTEGER PRIMARY KEY";
  for (const ColumnShape& column : table.columns) {
    if (column.since > version) continue;
    sql += std::string(",\n  ") + column.name + " " + column.declaration;
  }
  if (table.constraints != nullptr) sql += std::string(",\n  ") + table.constraints;
  return sql + "\n);\n";
}

}  // namespace

std::string SchemaStepSql(std::span<const TableShape> tables, int version) {
  std::string sql;
  for (const TableShape& table : tables) {
    if (table.since == version) {
      sql += CreateTableSql(table, version);
    } else if (table.since < version) {
      for (const ColumnShape& column : table.columns) {
        if (column.since != version) continue;
        sql += std::string("ALTER TABLE ") + table.name + " ADD COLUMN " + column.name + " " +
               column.declaration + ";\n";
      }
    }
    for (const Index& index : table.indexes) {
      if (index.since != version) continue;
      sql += std::string("CREATE INDEX ") + index.name + " ON " + table.name + "(" + index.columns +
             ");\n";
    }
  }
  return sql;
}

StoredValue ToStored(std::int64_t value) { return value; }
StoredValue ToStored(int value) { return std::int64_t{value}; }
StoredValue ToStored(double value) { return value; }
StoredValue ToStored(bool value) { return std::int64_t{value ? 1 : 0}; }
StoredValue ToStored(const std::string& value) { return value; }

StoredValue ToStored(const std::optional<std::int64_t>& value) {
  if (!value) return nullptr;
  return *value;
}

StoredValue ToStored(const std::optional<double>& value) {
  if (!value) return nullptr;
  return *value;
}

StoredValue ToStored(const Json& value) { return DumpJson(value); }

StoredValue ToStored(const std::optional<Json>& value) {
  if (!value) return nullptr;
  return DumpJson(*value);
}

void ReadField(RowReader& row, RowReader::Column column, std::int64_t& field) {
  field = row.Integer(column);
}
void ReadField(RowReader& row, RowReader::Column column, int& field) { field = row.Int(column); }
void ReadField(RowReader& row, RowReader::Column column, double& field) {
  field = row.Real(column);
}
void ReadField(RowReader& row, RowReader::Column column, bool& field) { field = row.Bool(column); }
void ReadField(RowReader& row, RowReader::Column column, std::string& field) {
  field = row.Text(column);
}
void ReadField(RowReader& row, RowReader::Column column, std::optional<std::int64_t>& field) {
  field = row.OptionalInteger(column);
}
void ReadField(RowReader& row, RowReader::Column column, std::optional<double>& field) {
  field = row.OptionalReal(column);
}
void ReadField(RowReader& row, RowReader::Column column, Json& field) {
  field = row.JsonValue(column);
}
void ReadField(RowReader& row, RowReader::Column column, std::optional<Json>& field) {
  field = row.OptionalJson(column);
}

Status ExecuteStored(SqlDatabase& db, std::string_view sql,
                     const std::vector<StoredValue>& values) {
  std::vector<SqlValue> bound;
  bound.reserve(values.size());
  for (const StoredValue& value : values) {
    bound.push_back(std::visit([](const auto& v) -> SqlValue { return SqlValue(v); }, value));
  }
  return db.Execute(sql, std::span<const SqlValue>(bound));
}

}  // namespace kernelpro::store
