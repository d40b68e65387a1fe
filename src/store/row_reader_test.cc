// RowReader: a row reads the same by column name in any order as by index, NULL reads as the
// empty value, and a missing column or malformed JSON is the row's error (the first one), never
// another column's value.
#include "store/row_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace kernelpro::store {
namespace store_row_reader_test {

class RowReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<SqlDatabase> db = SqlDatabase::Open(":memory:", /*create=*/true);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    ASSERT_TRUE(db_.Execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, x REAL, s TEXT, "
                            "j TEXT, flag INTEGER)")
                    .ok());
  }

  // The first row of `sql`, stepped onto.
  SqlStatement Row(const std::string& sql) {
    Result<SqlStatement> statement = db_.Prepare(sql);
    EXPECT_TRUE(statement.ok()) << statement.status().ToString();
    if (!statement.ok()) return SqlStatement();
    Result<bool> row = statement->Step();
    EXPECT_TRUE(row.ok() && *row) << sql;
    return std::move(*statement);
  }

  SqlDatabase db_;
};

TEST_F(RowReaderTest, ReadsByNameInAnyOrderAndByIndex) {
  ASSERT_TRUE(
      db_.Execute("INSERT INTO t VALUES (7, 3000000000, 2.5, 'text', '{\"a\": [1, 2]}', 1)").ok());
  SqlStatement statement = Row("SELECT id, n, x, s, j, flag FROM t");
  RowReader row(statement, "t");
  EXPECT_EQ(row.Text("s"), "text");  // out of SELECT order
  EXPECT_EQ(row.Integer("id"), 7);
  EXPECT_EQ(row.Integer("n"), 3000000000);
  EXPECT_DOUBLE_EQ(row.Real("x"), 2.5);
  EXPECT_EQ(row.JsonValue("j"), (Json{{"a", {1, 2}}}));
  EXPECT_TRUE(row.Bool("flag"));
  EXPECT_EQ(row.OptionalInteger("id"), std::optional<std::int64_t>(7));
  EXPECT_EQ(row.OptionalReal("x"), std::optional<double>(2.5));
  EXPECT_EQ(row.OptionalJson("j"), std::optional<Json>(Json{{"a", {1, 2}}}));
  EXPECT_EQ(row.Int(0), 7);
  EXPECT_EQ(row.Text(3), "text");
  EXPECT_FALSE(row.IsNull("n"));
  EXPECT_TRUE(row.ok()) << row.status().ToString();
}

TEST_F(RowReaderTest, AnAliasNamesAnExpression) {
  ASSERT_TRUE(db_.Execute("INSERT INTO t (id, n) VALUES (1, 5), (2, 6)").ok());
  SqlStatement statement = Row("SELECT COUNT(*) AS row_count, SUM(n) AS total FROM t");
  RowReader row(statement, "t");
  EXPECT_EQ(row.Integer("total"), 11);
  EXPECT_EQ(row.Integer("row_count"), 2);
  EXPECT_TRUE(row.ok()) << row.status().ToString();
}

TEST_F(RowReaderTest, NullReadsAsTheEmptyValue) {
  ASSERT_TRUE(db_.Execute("INSERT INTO t (id) VALUES (1)").ok());
  SqlStatement statement = Row("SELECT id, n, x, s, j, flag FROM t");
  RowReader row(statement, "t");
  EXPECT_TRUE(row.IsNull("n"));
  EXPECT_EQ(row.Integer("n"), 0);
  EXPECT_EQ(row.Real("x"), 0);
  EXPECT_EQ(row.Text("s"), "");
  EXPECT_FALSE(row.Bool("flag"));
  EXPECT_EQ(row.OptionalInteger("n"), std::nullopt);
  EXPECT_EQ(row.OptionalReal("x"), std::nullopt);
  EXPECT_EQ(row.OptionalJson("j"), std::nullopt);
  EXPECT_TRUE(row.ok()) << row.status().ToString();
  // A NULL where JSON is required is no JSON document.
  EXPECT_TRUE(row.JsonValue("j").is_null());
  EXPECT_EQ(row.status().message(), "the run store holds malformed JSON in t.j");
}

TEST_F(RowReaderTest, MalformedJsonIsTheRowsErrorNamingTheColumn) {
  ASSERT_TRUE(db_.Execute("INSERT INTO t (id, s, j) VALUES (1, '{', '{oops')").ok());
  SqlStatement statement = Row("SELECT id, s, j FROM t");
  RowReader row(statement, "t");
  EXPECT_TRUE(row.OptionalJson("j").value().is_null());
  EXPECT_EQ(row.Integer("id"), 1);  // later reads still work
  EXPECT_TRUE(row.JsonValue("s").is_null());
  EXPECT_EQ(row.status().code(), Status::Code::kInternal);
  EXPECT_EQ(row.status().message(), "the run store holds malformed JSON in t.j");  // the first
}

TEST_F(RowReaderTest, AColumnTheStatementLacksIsAnErrorNotAnotherColumnsValue) {
  ASSERT_TRUE(db_.Execute("INSERT INTO t (id, n, s) VALUES (1, 2, 'x')").ok());
  SqlStatement statement = Row("SELECT id, n FROM t");
  RowReader row(statement, "t");
  EXPECT_EQ(row.Text("s"), "");
  EXPECT_EQ(row.Integer(2), 0);
  EXPECT_EQ(row.OptionalInteger("missing"), std::nullopt);
  EXPECT_FALSE(row.ok());
  EXPECT_EQ(row.status().code(), Status::Code::kInternal);
  EXPECT_EQ(row.status().message(), "the run store's query on t has no column 's'");
  EXPECT_EQ(row.Integer("n"), 2);

  RowReader by_index(statement, "t");
  by_index.Integer(-1);
  EXPECT_EQ(by_index.status().message(), "the run store's query on t has no column -1");
}

}  // namespace store_row_reader_test
}  // namespace kernelpro::store
