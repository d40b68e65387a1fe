// Arithmetic over named metrics, for declarative rule files (rule_tool.h).
//
//   expr    := or ; or := and ('||' and)* ; and := cmp ('&&' cmp)* ;
//   cmp     := sum (('<'|'<='|'>'|'>='|'=='|'!=') sum)? ; sum := prod (('+'|'-') prod)* ;
//   prod    := unary (('*'|'/') unary)* ; unary := ('-'|'!') unary | atom ;
//   atom    := number | name | name '(' args ')' | '(' expr ')'
//
// Names are metric names as in the MetricSet ("dram__bytes_read.sum", "sass.local_store",
// "timeline.kernel_count"): letters, digits, '_', '.', ':'. Functions: min(a, b, ...),
// max(a, b, ...), abs(x), has(name) (1 when the metric is present, which lets a rule use an
// optional metric without requiring it). Truth is "not zero"; comparisons and logic give 1 or 0.
// Division by zero gives inf or nan as in IEEE arithmetic (and nan compares false).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/status.h"

namespace kernelpro::tools {

class Expression {
 public:
  // Parses `text`; InvalidArgument with the position of the problem otherwise.
  static Result<Expression> Parse(std::string_view text);

  // Every name the expression reads, except those only tested with has().
  const std::set<std::string>& names() const { return names_; }
  const std::string& text() const { return text_; }

  // Evaluates with `lookup` giving each name's value (nullopt: the name is unknown, and the
  // evaluation fails with NotFound naming it; has() never fails).
  using Lookup = std::function<std::optional<double>(std::string_view)>;
  Result<double> Evaluate(const Lookup& lookup) const;

  struct Node;

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::set<std::string> names_;
};

}  // namespace kernelpro::tools
