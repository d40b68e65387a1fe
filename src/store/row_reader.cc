#include "store/row_reader.h"

#include <utility>

namespace kernelpro::store {

int RowReader::Index(const Column& column) {
  const int count = statement_.ColumnCount();
  if (!column.by_name_) {
    if (column.index_ >= 0 && column.index_ < count) return column.index_;
    Fail("the run store's query on " + std::string(table_) + " has no column " +
         std::to_string(column.index_));
    return -1;
  }
  // Row functions read in SELECT order, so the search starts after the last column found and
  // usually ends at its first step.
  for (int step = 0; step < count; ++step) {
    const int index = (next_ + step) % count;
    if (statement_.ColumnName(index) == column.name_) {
      next_ = index + 1;
      return index;
    }
  }
  Fail("the run store's query on " + std::string(table_) + " has no column '" +
       std::string(column.name_) + "'");
  return -1;
}

void RowReader::Fail(std::string message) {
  if (status_.ok()) status_ = Status::Internal(std::move(message));
}

bool RowReader::IsNull(Column column) {
  const int index = Index(column);
  return index < 0 || statement_.IsNull(index);
}

std::int64_t RowReader::Integer(Column column) {
  const int index = Index(column);
  return index < 0 ? 0 : statement_.Integer(index);
}

int RowReader::Int(Column column) { return static_cast<int>(Integer(column)); }

double RowReader::Real(Column column) {
  const int index = Index(column);
  return index < 0 ? 0 : statement_.Real(index);
}

bool RowReader::Bool(Column column) { return Integer(column) != 0; }

std::string RowReader::Text(Column column) {
  const int index = Index(column);
  return index < 0 ? std::string() : statement_.Text(index);
}

std::optional<std::int64_t> RowReader::OptionalInteger(Column column) {
  const int index = Index(column);
  if (index < 0) return std::nullopt;
  return statement_.OptionalInteger(index);
}

std::optional<double> RowReader::OptionalReal(Column column) {
  const int index = Index(column);
  if (index < 0) return std::nullopt;
  return statement_.OptionalReal(index);
}

Json RowReader::JsonValue(Column column) {
  const int index = Index(column);
  if (index < 0) return nullptr;
  Json value = Json::parse(statement_.Text(index), nullptr, /*allow_exceptions=*/false);
  if (!value.is_discarded()) return value;
  Fail("the run store holds malformed JSON in " + std::string(table_) + "." +
       std::string(statement_.ColumnName(index)));
  return nullptr;
}

std::optional<Json> RowReader::OptionalJson(Column column) {
  const int index = Index(column);
  if (index < 0) return std::nullopt;
  if (statement_.IsNull(index)) return std::nullopt;
  return JsonValue(index);
}

}  // namespace kernelpro::store
