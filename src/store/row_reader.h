// RowReader: the one way the run store reads a result row into a record. A column is named by its
// name in the SELECT list (the AS alias of an expression) or by its 0-based index; each getter
// returns one C++ type and reads NULL as 0 / false / "" / nullopt, as SqlStatement does.
//
// A table's rows are read through it by ReadRow (columns.h), column by column as the table's
// declaration says; a row that is no table's (the sums over LLM exchanges) is a straight list of
// `record.field = row.Getter("column")` with one check at the end. Either way a column the
// statement lacks and JSON text that does not parse become the reader's status (the first such
// failure, Internal) while the getter returns the type's empty value.
//
//   RowReader row(statement, "llm_exchanges");
//   LlmTotals totals;
//   totals.exchanges = row.Integer("exchanges");
//   totals.cost_usd = row.Real("sum_cost_usd");
//   if (!row.ok()) return row.status();
//   return totals;
//
// Reading by name ties a field to its column rather than to a position in the SELECT list, so a
// column added to or moved in that list cannot shift another field's value, and a misspelt name
// is an error instead of some other column's value.
//
// Thread-safety: none. A RowReader reads the statement's current row: use it before the statement
// steps again, on the thread that owns the statement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/json_io.h"
#include "core/status.h"
#include "store/sqlite.h"

namespace kernelpro::store {

class RowReader {
 public:
  // A column of the row: its name or its 0-based index. Implicit so that every getter takes
  // either form: row.Integer("id"), row.Integer(0).
  class Column {
   public:
    Column(int index) : index_(index) {}                            // NOLINT: implicit by design
    Column(const char* name) : by_name_(true), name_(name) {}       // NOLINT: implicit by design
    Column(std::string_view name) : by_name_(true), name_(name) {}  // NOLINT: implicit by design

   private:
    friend class RowReader;
    bool by_name_ = false;
    int index_ = -1;
    std::string_view name_;
  };

  // `table` names where the row comes from in error messages ("evaluations"); it is not copied,
  // so it must outlive the reader (a string literal does).
  RowReader(const SqlStatement& statement, std::string_view table)
      : statement_(statement), table_(table) {}

  bool IsNull(Column column);
  std::int64_t Integer(Column column);
  int Int(Column column);  // an INTEGER column that holds an int (iteration, attempts)
  double Real(Column column);
  bool Bool(Column column);  // an INTEGER column that holds 0 or 1; any non-zero reads as true
  std::string Text(Column column);
  std::optional<std::int64_t> OptionalInteger(Column column);
  std::optional<double> OptionalReal(Column column);
  // The column's text parsed as JSON; null when it does not parse (a NULL column reads as "",
  // which does not), and the failure names the column ("the run store holds malformed JSON in
  // evaluations.result_json").
  Json JsonValue(Column column);
  // As JsonValue; a NULL column reads as none.
  std::optional<Json> OptionalJson(Column column);

  // Whether every read so far found its column and parsed; otherwise the first failure.
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

 private:
  // The index of `column`, or -1 (recorded as the failure) when the statement has no such column.
  int Index(const Column& column);
  void Fail(std::string message);

  const SqlStatement& statement_;
  std::string_view table_;
  int next_ = 0;  // the column after the last one found by name: where the next search starts
  Status status_;
};

}  // namespace kernelpro::store
