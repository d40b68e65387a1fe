#include "tools/expression.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace kernelpro::tools {

struct Expression::Node {
  enum class Kind { kNumber, kName, kUnary, kBinary, kCall };
  Kind kind = Kind::kNumber;
  double number = 0;
  std::string text;  // name, operator or function
  std::vector<std::shared_ptr<const Node>> children;
};

namespace {

using Node = Expression::Node;
using NodePtr = std::shared_ptr<const Node>;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
}

class Parser {
 public:
  Parser(std::string_view text, std::set<std::string>& names) : text_(text), names_(names) {}

  Result<NodePtr> ParseAll() {
    auto node = ParseOr();
    if (!node.ok()) return node;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected '" + std::string(1, text_[pos_]) + "'");
    return node;
  }

 private:
  Status Error(const std::string& what) const {
    return Status::InvalidArgument("expression \"" + std::string(text_) + "\": " + what +
                                   " at position " + std::to_string(pos_ + 1));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    // "<" must not swallow the first half of "<=".
    if (token.size() == 1 && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=' &&
        (token == "<" || token == ">" || token == "!")) {
      return false;
    }
    pos_ += token.size();
    return true;
  }
  static NodePtr Binary(std::string op, NodePtr a, NodePtr b) {
    auto node = std::make_shared<Node>();
    node->kind = Node::Kind::kBinary;
    node->text = std::move(op);
    node->children = {std::move(a), std::move(b)};
    return node;
  }

  Result<NodePtr> ParseOr() {
    auto left = ParseAnd();
    if (!left.ok()) return left;
    NodePtr node = *left;
    while (Accept("||")) {
      auto right = ParseAnd();
      if (!right.ok()) return right;
      node = Binary("||", node, *right);
    }
    return node;
  }
  Result<NodePtr> ParseAnd() {
    auto left = ParseComparison();
    if (!left.ok()) return left;
    NodePtr node = *left;
    while (Accept("&&")) {
      auto right = ParseComparison();
      if (!right.ok()) return right;
      node = Binary("&&", node, *right);
    }
    return node;
  }
  Result<NodePtr> ParseComparison() {
    auto left = ParseSum();
    if (!left.ok()) return left;
    for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (Accept(op)) {
        auto right = ParseSum();
        if (!right.ok()) return right;
        return Binary(std::string(op), *left, *right);
      }
    }
    return left;
  }
  Result<NodePtr> ParseSum() {
    auto left = ParseProduct();
    if (!left.ok()) return left;
    NodePtr node = *left;
    for (;;) {
      std::string op = Accept("+") ? "+" : Accept("-") ? "-" : "";
      if (op.empty()) return node;
      auto right = ParseProduct();
      if (!right.ok()) return right;
      node = Binary(op, node, *right);
    }
  }
  Result<NodePtr> ParseProduct() {
    auto left = ParseUnary();
    if (!left.ok()) return left;
    NodePtr node = *left;
    for (;;) {
      std::string op = Accept("*") ? "*" : Accept("/") ? "/" : "";
      if (op.empty()) return node;
      auto right = ParseUnary();
      if (!right.ok()) return right;
      node = Binary(op, node, *right);
    }
  }
  Result<NodePtr> ParseUnary() {
    for (std::string_view op : {"-", "!"}) {
      if (Accept(op)) {
        auto operand = ParseUnary();
        if (!operand.ok()) return operand;
        auto node = std::make_shared<Node>();
        node->kind = Node::Kind::kUnary;
        node->text = std::string(op);
        node->children = {*operand};
        return NodePtr(node);
      }
    }
    return ParseAtom();
  }
  Result<NodePtr> ParseAtom() {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a number, a name or '('");
    if (Accept("(")) {
      auto inner = ParseOr();
      if (!inner.ok()) return inner;
      if (!Accept(")")) return Error("expected ')'");
      return inner;
    }
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      std::string number(text_.substr(pos_));
      char* end = nullptr;
      double value = std::strtod(number.c_str(), &end);
      if (end == number.c_str()) return Error("bad number");
      pos_ += static_cast<std::size_t>(end - number.c_str());
      auto node = std::make_shared<Node>();
      node->number = value;
      return NodePtr(node);
    }
    if (!IsNameChar(c)) return Error("unexpected '" + std::string(1, c) + "'");
    std::size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (Accept("(")) return ParseCall(name);
    auto node = std::make_shared<Node>();
    node->kind = Node::Kind::kName;
    node->text = name;
    names_.insert(name);
    return NodePtr(node);
  }
  Result<NodePtr> ParseCall(const std::string& function) {
    auto node = std::make_shared<Node>();
    node->kind = Node::Kind::kCall;
    node->text = function;
    if (function == "has") {
      SkipSpace();
      std::size_t start = pos_;
      while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
      if (start == pos_) return Error("has() takes a metric name");
      auto name = std::make_shared<Node>();
      name->kind = Node::Kind::kName;
      name->text = std::string(text_.substr(start, pos_ - start));
      node->children = {name};  // not added to names_: testing presence requires nothing
    } else if (function == "min" || function == "max" || function == "abs") {
      do {
        auto arg = ParseOr();
        if (!arg.ok()) return arg;
        node->children.push_back(*arg);
      } while (Accept(","));
      if (function == "abs" && node->children.size() != 1) return Error("abs() takes one argument");
    } else {
      return Error("unknown function '" + function + "' (known: min, max, abs, has)");
    }
    if (!Accept(")")) return Error("expected ')'");
    return NodePtr(node);
  }

  std::string_view text_;
  std::set<std::string>& names_;
  std::size_t pos_ = 0;
};

Result<double> Eval(const Node& node, const Expression::Lookup& lookup) {
  switch (node.kind) {
    case Node::Kind::kNumber:
      return node.number;
    case Node::Kind::kName: {
      std::optional<double> value = lookup(node.text);
      if (!value) return Status::NotFound("unknown metric '" + node.text + "'");
      return *value;
    }
    case Node::Kind::kUnary: {
      auto v = Eval(*node.children[0], lookup);
      if (!v.ok()) return v;
      return node.text == "-" ? -*v : (*v == 0 ? 1.0 : 0.0);
    }
    case Node::Kind::kCall: {
      if (node.text == "has") return lookup(node.children[0]->text).has_value() ? 1.0 : 0.0;
      std::vector<double> args;
      for (const auto& child : node.children) {
        auto v = Eval(*child, lookup);
        if (!v.ok()) return v;
        args.push_back(*v);
      }
      if (node.text == "abs") return std::abs(args[0]);
      double result = args[0];
      for (double a : args) result = node.text == "min" ? std::min(result, a) : std::max(result, a);
      return result;
    }
    case Node::Kind::kBinary: {
      auto a = Eval(*node.children[0], lookup);
      if (!a.ok()) return a;
      // Short-circuit logic, so `has(x) && x > 3` never reads a missing x.
      if (node.text == "&&" && (*a == 0 || std::isnan(*a))) return 0.0;
      if (node.text == "||" && *a != 0 && !std::isnan(*a)) return 1.0;
      auto b = Eval(*node.children[1], lookup);
      if (!b.ok()) return b;
      const std::string& op = node.text;
      if (op == "+") return *a + *b;
      if (op == "-") return *a - *b;
      if (op == "*") return *a * *b;
      if (op == "/") return *a / *b;
      if (op == "<") return *a < *b ? 1.0 : 0.0;
      if (op == "<=") return *a <= *b ? 1.0 : 0.0;
      if (op == ">") return *a > *b ? 1.0 : 0.0;
      if (op == ">=") return *a >= *b ? 1.0 : 0.0;
      if (op == "==") return *a == *b ? 1.0 : 0.0;
      if (op == "!=") return *a != *b ? 1.0 : 0.0;
      if (op == "&&") return (*b != 0 && !std::isnan(*b)) ? 1.0 : 0.0;
      if (op == "||") return (*b != 0 && !std::isnan(*b)) ? 1.0 : 0.0;
      return Status::Internal("unknown operator " + op);
    }
  }
  return Status::Internal("bad expression node");
}

}  // namespace

Result<Expression> Expression::Parse(std::string_view text) {
  Expression e;
  e.text_ = std::string(text);
  Parser parser(e.text_, e.names_);
  auto root = parser.ParseAll();
  if (!root.ok()) return root.status();
  e.root_ = *root;
  return e;
}

Result<double> Expression::Evaluate(const Lookup& lookup) const {
  if (!root_) return Status::InvalidArgument("empty expression");
  return Eval(*root_, lookup);
}

}  // namespace kernelpro::tools
