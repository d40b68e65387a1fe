#include "tools/expression.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace kernelpro::tools {
namespace tools_expression_test {

Result<double> Eval(const std::string& text,
                    const std::map<std::string, double, std::less<>>& values = {}) {
  auto e = Expression::Parse(text);
  if (!e.ok()) return e.status();
  return e->Evaluate([&](std::string_view name) -> std::optional<double> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  });
}

TEST(ExpressionTest, ArithmeticPrecedenceAndLogic) {
  EXPECT_DOUBLE_EQ(*Eval("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(*Eval("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(*Eval("-2 * -3"), 6);
  EXPECT_DOUBLE_EQ(*Eval("10 / 4 - 1"), 1.5);
  EXPECT_DOUBLE_EQ(*Eval("1 < 2 && 3 >= 3"), 1);
  EXPECT_DOUBLE_EQ(*Eval("1 > 2 || 2 != 2"), 0);
  EXPECT_DOUBLE_EQ(*Eval("!0 && !(1 <= 0)"), 1);
  EXPECT_DOUBLE_EQ(*Eval("min(3, 1, 2) + max(4, 5) + abs(-2)"), 8);
  EXPECT_DOUBLE_EQ(*Eval("2.5e3 / 1e3"), 2.5);
}

TEST(ExpressionTest, MetricNamesWithDotsAndHas) {
  std::map<std::string, double, std::less<>> m = {{"dram__bytes_read.sum", 2e9},
                                                  {"sass.local_store", 4}};
  EXPECT_DOUBLE_EQ(*Eval("dram__bytes_read.sum / 1e9", m), 2);
  EXPECT_DOUBLE_EQ(*Eval("has(sass.local_store) && sass.local_store > 3", m), 1);
  // has() of a missing name is 0 and short-circuits, so the missing name is never read.
  EXPECT_DOUBLE_EQ(*Eval("has(timeline.kernel_count) && timeline.kernel_count > 3", m), 0);
  auto e = Expression::Parse("has(x) && y > z.w");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->names(), (std::set<std::string>{"y", "z.w"}));
}

TEST(ExpressionTest, UnknownNamesAndNanAreNotTrue) {
  auto missing = Eval("nope > 1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("unknown metric 'nope'"), std::string::npos);
  EXPECT_TRUE(std::isinf(*Eval("1 / 0")));
  EXPECT_DOUBLE_EQ(*Eval("0 / 0 > 1"), 0);
  EXPECT_DOUBLE_EQ(*Eval("0 / 0 && 1"), 0);
}

TEST(ExpressionTest, SyntaxErrorsSayWhere) {
  for (std::string bad : {"1 +", "(1 + 2", "a >", "foo(1)", "1 2", "abs(1, 2)", "has()", "#"}) {
    auto e = Expression::Parse(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("position"), std::string::npos) << e.status().message();
  }
}

}  // namespace tools_expression_test
}  // namespace kernelpro::tools
