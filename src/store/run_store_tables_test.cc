// The run store's table declarations (run_store_tables.h) are the whole truth about its
// database: a store has exactly the declared columns, its schema is the one recorded runs were
// written with (so they keep opening), and a row of every table written with every column set
// reads back with every column, so a column added to a declaration cannot be left out of the
// schema, the insert or the read.
#include "store/run_store_tables.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace kernelpro::store {
namespace store_run_store_tables_test {

namespace fs = std::filesystem;

constexpr std::int64_t kNowMs = 1700000000000;

class RunStoreTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/run_store_tables_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  // The rows of `sql` on `db`, each column as text ("<null>" for NULL), one string per row.
  static std::vector<std::string> Rows(SqlDatabase& db, const std::string& sql) {
    std::vector<std::string> rows;
    Result<SqlStatement> statement = db.Prepare(sql);
    EXPECT_TRUE(statement.ok()) << statement.status().ToString();
    if (!statement.ok()) return rows;
    while (true) {
      Result<bool> row = statement->Step();
      EXPECT_TRUE(row.ok()) << row.status().ToString();
      if (!row.ok() || !*row) return rows;
      std::string text;
      for (int i = 0; i < statement->ColumnCount(); ++i) {
        text += (i > 0 ? " | " : "") +
                (statement->IsNull(i) ? std::string("<null>") : statement->Text(i));
      }
      rows.push_back(text);
    }
  }

  // A database of this build's schema, made by RunStore::Open in its own run directory.
  SqlDatabase NewStoreDatabase(const std::string& name) {
    const std::string dir = root_ + "/" + name;
    {
      // Closed before the copy: the last connection's close moves the WAL into the file.
      Result<std::unique_ptr<RunStore>> store = RunStore::Open(dir);
      EXPECT_TRUE(store.ok()) << store.status().ToString();
    }
    return OpenCopy(dir + "/" + kRunStoreFileName, name + "-copy.db");
  }

  // A connection to a copy of the database at `path` (a fixture is never written).
  SqlDatabase OpenCopy(const std::string& path, const std::string& name) {
    const std::string copy = root_ + "/" + name;
    std::error_code error;
    fs::copy_file(path, copy, fs::copy_options::overwrite_existing, error);
    EXPECT_FALSE(error) << path << ": " << error.message();
    Result<SqlDatabase> db = SqlDatabase::Open(copy, /*create=*/false);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : SqlDatabase();
  }

  std::string root_;
};

TEST_F(RunStoreTablesTest, AStoreHasExactlyTheDeclaredTablesAndColumns) {
  SqlDatabase db = NewStoreDatabase("run");
  std::set<std::string> declared_tables = {"schema_version"};
  for (const TableShape& table : RunStoreTables()) {
    declared_tables.insert(table.name);
    EXPECT_LE(table.since, kRunStoreSchemaVersion) << table.name;
    // name | declared type | NOT NULL, as the database has them and as the table declares them.
    std::vector<std::string> declared = {"id | INTEGER | 0"};
    for (const ColumnShape& column : table.columns) {
      EXPECT_LE(column.since, kRunStoreSchemaVersion) << table.name << "." << column.name;
      const std::string declaration = column.declaration;
      const std::string type = declaration.substr(0, declaration.find(' '));
      const bool not_null = declaration.find("NOT NULL") != std::string::npos;
      declared.push_back(std::string(column.name) + " | " + type + " | " + (not_null ? "1" : "0"));
    }
    EXPECT_EQ(Rows(db, std::string("SELECT name, type, \"notnull\" FROM pragma_table_info('") +
                           table.name + "') ORDER BY cid"),
              declared)
        << table.name;
  }
  std::vector<std::string> tables = Rows(db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
  EXPECT_EQ(std::set<std::string>(tables.begin(), tables.end()), declared_tables);
}

TEST_F(RunStoreTablesTest, ANewStoreHasTheSchemaOfTheRecordedRuns) {
  // Runs recorded on the H200 and with a local model by earlier kernelpros; reports are rendered
  // from them, so a new store must be the same database, table for table and index for index.
  SqlDatabase fresh = NewStoreDatabase("run");
  const std::string schema = "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name";
  const std::vector<std::string> expected = Rows(fresh, schema);
  ASSERT_FALSE(expected.empty());
  int compared = 0;
  for (const char* fixture :
       {"tests/fixtures/gemma-optimize/run.db", "tests/fixtures/h200-optimize/demo-cuda/run.db",
        "tests/fixtures/h200-programs/program-optimize/run.db"}) {
    SqlDatabase recorded = OpenCopy(std::string(KERNELPRO_SOURCE_ROOT) + "/" + fixture,
                                    "fixture" + std::to_string(compared++) + ".db");
    EXPECT_EQ(Rows(recorded, schema), expected) << fixture;
  }
}

// Sets every field a column of `table` holds to a value of its own, none the type's empty one.
template <typename Record>
void FillFields(const Table<Record>& table, Record& record) {
  int n = 1;
  for (const Column<Record>& column : table.columns) {
    ++n;
    std::visit(
        [&](auto field) {
          using Field = decltype(field);
          if constexpr (std::is_same_v<Field, std::int64_t Record::*>) {
            record.*field = 1000 + n;
          } else if constexpr (std::is_same_v<Field, int Record::*>) {
            record.*field = 100 + n;
          } else if constexpr (std::is_same_v<Field, double Record::*>) {
            record.*field = 0.25 + n;
          } else if constexpr (std::is_same_v<Field, bool Record::*>) {
            record.*field = true;
          } else if constexpr (std::is_same_v<Field, std::string Record::*>) {
            record.*field = std::string("text of ") + column.name;
          } else if constexpr (std::is_same_v<Field, std::optional<std::int64_t> Record::*>) {
            record.*field = 2000 + n;
          } else if constexpr (std::is_same_v<Field, std::optional<double> Record::*>) {
            record.*field = 0.5 + n;
          } else if constexpr (std::is_same_v<Field, Json Record::*> ||
                               std::is_same_v<Field, std::optional<Json> Record::*>) {
            record.*field = Json{{"column", column.name}, {"n", n}};
          }
        },
        column.field);
  }
}

// What an insert writes into `column` for `record` at kNowMs.
template <typename Record>
StoredValue ExpectedValue(const Column<Record>& column, const Record& record) {
  if (column.written == Written::kNow) return kNowMs;
  return StoredValueOf(column, record);
}

// A value as the test prints it.
std::string Show(const StoredValue& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return std::to_string(*integer);
  if (const auto* real = std::get_if<double>(&value)) return "real " + std::to_string(*real);
  if (const auto* text = std::get_if<std::string>(&value)) return "'" + *text + "'";
  return "NULL";
}

// Column `index` of the statement's row, as the type of `like`.
StoredValue ValueAt(const SqlStatement& statement, int index, const StoredValue& like) {
  if (statement.IsNull(index)) return nullptr;
  if (std::holds_alternative<std::int64_t>(like)) return statement.Integer(index);
  if (std::holds_alternative<double>(like)) return statement.Real(index);
  return statement.Text(index);
}

// Inserts `record` (its fields filled) into `table` on `db` and checks that the database holds
// every column's value and that the row reads back with every readable column's value.
template <typename Record>
void ExpectRoundTrip(SqlDatabase& db, const Table<Record>& table, Record record) {
  SCOPED_TRACE(table.name);
  FillFields(table, record);
  ASSERT_TRUE(InsertRow(db, table, record, kNowMs).ok());
  record.*table.id = db.LastInsertRowId();
  Result<SqlStatement> select =
      db.Prepare("SELECT " + SelectList(table) + " FROM " + table.name + " WHERE id = ?");
  ASSERT_TRUE(select.ok()) << select.status().ToString();
  ASSERT_TRUE(select->Bind({record.*table.id}).ok());
  Result<bool> row = select->Step();
  ASSERT_TRUE(row.ok() && *row);
  Result<Record> read = ReadRow(table, *select);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read).*table.id, record.*table.id);
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const Column<Record>& column = table.columns[i];
    const StoredValue expected = ExpectedValue(column, record);
    EXPECT_FALSE(std::holds_alternative<std::nullptr_t>(expected))
        << column.name << " was left empty by the test";
    EXPECT_EQ(Show(ValueAt(*select, static_cast<int>(i) + 1, expected)), Show(expected))
        << column.name << " is not written as the record has it";
    const bool readable = column.read != nullptr || column.field.index() != 0;
    if (readable) {
      EXPECT_EQ(Show(ExpectedValue(column, *read)), Show(expected))
          << column.name << " does not read back";
    }
  }
}

TEST_F(RunStoreTablesTest, EveryColumnOfEveryTableIsWrittenAndReadBack) {
  Result<SqlDatabase> opened = SqlDatabase::Open(":memory:", /*create=*/true);
  ASSERT_TRUE(opened.ok());
  SqlDatabase& db = *opened;
  for (int version = 1; version <= kRunStoreSchemaVersion; ++version) {
    ASSERT_TRUE(db.Execute(SchemaStepSql(RunStoreTables(), version)).ok()) << version;
  }
  // The fields a column holds through functions of its own are set here; the rest by FillFields.
  RunRecord run;
  run.status = RunStatus::kFinished;
  ExpectRoundTrip(db, kRunsTable, run);
  ExpectRoundTrip(db, kCandidatesTable, CandidateRecord{});
  ExpectRoundTrip(db, kNodesTable, NodeRecord{});
  ExpectRoundTrip(db, kEvaluationsTable, EvaluationRecord{});
  ExpectRoundTrip(db, kMetricsTable, MetricsRecord{});
  ExpectRoundTrip(db, kToolOutputsTable, ToolOutputRecord{});
  ExpectRoundTrip(db, kProfileAnalysesTable, ProfileAnalysisRecord{});
  ExpectRoundTrip(db, kLlmExchangesTable, LlmExchangeRecord{});  // with an error: ok = 0
  ExpectRoundTrip(db, kMemoryEntriesTable, MemoryRecord{});
  StepRecord step;
  step.key = {7, 3, "evaluate", "candidate:42"};
  step.state = StepState::kDone;
  ExpectRoundTrip(db, kStepsTable, step);
  EXPECT_EQ(Rows(db, "SELECT ok FROM llm_exchanges"), std::vector<std::string>{"0"});
}

}  // namespace store_run_store_tables_test
}  // namespace kernelpro::store
