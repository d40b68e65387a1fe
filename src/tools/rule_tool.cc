#include "tools/rule_tool.h"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tools/expression.h"

namespace kernelpro::tools {
namespace {

struct Template {
  std::string text;
  std::vector<std::string> names;  // the {name}s, in order
};

struct SeverityRule {
  std::optional<Expression> when;
  Severity level = Severity::kMedium;
};

struct RuleRecommendation {
  Template action, expected;
};

struct RuleSpec {
  std::string name, description;
  ToolSource source = ToolSource::kNcu;
  std::vector<roofline::Bottleneck> bottlenecks;
  int priority = 50;
  std::vector<std::string> required;
  std::vector<ThresholdSpec> thresholds;
  std::vector<std::pair<std::string, Expression>> lets;
  std::optional<Expression> trigger;
  std::vector<SeverityRule> severities;
  Template title, summary, root_cause, code_example;
  std::vector<std::string> observed;
  std::vector<RuleRecommendation> recommendations;
};

Result<Template> ParseTemplate(const std::string& text) {
  Template t{text, {}};
  for (std::size_t open = text.find('{'); open != std::string::npos;
       open = text.find('{', open + 1)) {
    std::size_t close = text.find('}', open);
    if (close == std::string::npos)
      return Status::InvalidArgument("unclosed '{' in \"" + text + "\"");
    t.names.push_back(text.substr(open + 1, close - open - 1));
  }
  return t;
}

class RuleTool : public ProfilingTool {
 public:
  explicit RuleTool(RuleSpec spec) : spec_(std::move(spec)) {}

  std::string name() const override { return spec_.name; }
  ToolSource source() const override { return spec_.source; }
  std::string description() const override { return spec_.description; }
  std::vector<std::string> required_metrics() const override { return spec_.required; }
  std::vector<ThresholdSpec> thresholds() const override { return spec_.thresholds; }
  std::vector<roofline::Bottleneck> bottlenecks() const override { return spec_.bottlenecks; }
  int priority() const override { return spec_.priority; }

  ToolOutput Analyze(const MetricSet& metrics, const ToolContext& context) const override {
    ToolOutput out = NewOutput(context);
    std::map<std::string, double, std::less<>> values;  // thresholds and lets
    for (const ThresholdSpec& t : spec_.thresholds) values[t.name] = Threshold(context, t.name);
    Expression::Lookup lookup = [&](std::string_view name) -> std::optional<double> {
      if (auto it = values.find(name); it != values.end()) return it->second;
      return metrics.Find(name);
    };
    auto fail = [&](const Status& s) {
      // A rule that cannot be evaluated says so instead of guessing.
      out.triggered = false;
      out.skipped = true;
      out.skip_reason = s.message();
      return out;
    };
    for (const auto& [name, expression] : spec_.lets) {
      auto v = expression.Evaluate(lookup);
      if (!v.ok()) return fail(v.status());
      values[name] = *v;
    }
    auto triggered = spec_.trigger->Evaluate(lookup);
    if (!triggered.ok()) return fail(triggered.status());
    out.triggered = *triggered != 0 && *triggered == *triggered;
    if (!out.triggered) return out;
    out.severity = Severity::kMedium;
    for (const SeverityRule& rule : spec_.severities) {
      if (!rule.when) {
        out.severity = rule.level;
        break;
      }
      auto holds = rule.when->Evaluate(lookup);
      if (!holds.ok()) return fail(holds.status());
      if (*holds != 0 && *holds == *holds) {
        out.severity = rule.level;
        break;
      }
    }
    auto render = [&](const Template& t) {
      std::string text;
      std::size_t pos = 0;
      for (const std::string& name : t.names) {
        std::size_t open = t.text.find('{', pos);
        text += t.text.substr(pos, open - pos);
        std::optional<double> v = lookup(name);
        text += v ? FormatNumber(*v) : "{" + name + "}";
        pos = open + name.size() + 2;
      }
      return text + t.text.substr(pos);
    };
    out.title = render(spec_.title);
    out.summary = render(spec_.summary);
    out.root_cause = render(spec_.root_cause);
    out.code_example = spec_.code_example.text;
    for (const std::string& name : spec_.observed) {
      if (auto v = lookup(name)) out.observed.push_back({name, *v, metrics.Unit(name)});
    }
    for (const RuleRecommendation& r : spec_.recommendations) {
      out.recommendations.push_back({render(r.action), render(r.expected)});
    }
    return out;
  }

 private:
  RuleSpec spec_;
};

Status KeysKnown(const toml::table& table, std::initializer_list<std::string_view> known,
                 const std::string& where) {
  for (const auto& [key, value] : table) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || key.str() == k;
    if (!ok)
      return Status::InvalidArgument(where + ": unknown key '" + std::string(key.str()) + "'");
  }
  return Status::Ok();
}

Result<std::string> String(const toml::table& t, std::string_view key, const std::string& where,
                           bool required) {
  const toml::node* node = t.get(key);
  if (!node) {
    if (required)
      return Status::InvalidArgument(where + ": '" + std::string(key) + "' is required");
    return std::string();
  }
  if (!node->is_string())
    return Status::InvalidArgument(where + ": '" + std::string(key) + "' must be a string");
  return std::string(node->as_string()->get());
}

// Reads one [[tool]] table into a RuleSpec, key by key in a fixed order, and stops at the first
// error (so a file with several mistakes always reports the same one). Thresholds and lets are
// names the rule defines; every other name an expression or template reads is a metric, required
// unless the table says otherwise. One parser per table.
class RuleSpecParser {
 public:
  RuleSpecParser(const toml::table& table, const std::string& origin, std::size_t index)
      : t_(table), origin_(origin), where_(origin + ": [[tool]] #" + std::to_string(index + 1)) {}

  Result<RuleSpec> Parse() {
    Status s = ParseIdentity();
    if (s.ok()) s = ParseThresholds();
    if (s.ok()) s = ParseLets();
    if (s.ok()) s = ParseTrigger();
    if (s.ok()) s = ParseSeverities();
    if (s.ok()) s = ParseTemplates();
    if (s.ok()) s = ParseRecommendations();
    if (s.ok()) s = ParseObserved();
    if (s.ok()) s = ParseRequired();
    if (!s.ok()) return s;
    return std::move(spec_);
  }

 private:
  Result<std::string> Text(std::string_view key, bool required) const {
    return String(t_, key, where_, required);
  }

  // A name the rule reads: a metric unless a threshold or let defines it.
  void Reads(const std::string& name) {
    if (!defined_.contains(name)) metrics_.insert(name);
  }

  Result<Expression> ParseExpression(const std::string& source_text, const std::string& what) {
    auto e = Expression::Parse(source_text);
    if (!e.ok()) return Status::InvalidArgument(where_ + ": " + what + ": " + e.status().message());
    for (const std::string& n : e->names()) Reads(n);
    return e;
  }

  // The known keys, then name, source, description, bottlenecks and priority. Errors name the
  // tool once its name is known.
  Status ParseIdentity() {
    if (Status s = KeysKnown(t_,
                             {"name", "source", "description", "bottlenecks", "priority",
                              "required", "trigger", "title", "summary", "root_cause", "observed",
                              "code_example", "thresholds", "let", "severity", "recommendation"},
                             where_);
        !s.ok()) {
      return s;
    }
    auto name = Text("name", true);
    if (!name.ok()) return name.status();
    spec_.name = *name;
    where_ = origin_ + ": tool '" + spec_.name + "'";
    auto source = Text("source", false);
    if (!source.ok()) return source.status();
    if (!source->empty()) {
      auto parsed = ParseToolSource(*source);
      if (!parsed.ok()) return Status::InvalidArgument(where_ + ": " + parsed.status().message());
      spec_.source = *parsed;
    }
    auto description = Text("description", false);
    if (!description.ok()) return description.status();
    spec_.description = *description;
    if (const toml::array* classes = t_.get_as<toml::array>("bottlenecks")) {
      for (const toml::node& c : *classes) {
        auto b = c.is_string() ? roofline::ParseBottleneck(c.as_string()->get())
                               : Status::InvalidArgument("not a string");
        if (!b.ok()) {
          return Status::InvalidArgument(where_ + ": bottlenecks: " + b.status().message());
        }
        spec_.bottlenecks.push_back(*b);
      }
    } else {
      spec_.bottlenecks.assign(std::begin(roofline::kAllBottlenecks),
                               std::end(roofline::kAllBottlenecks));
    }
    if (const toml::node* p = t_.get("priority")) {
      if (!p->is_integer()) {
        return Status::InvalidArgument(where_ + ": 'priority' must be an integer");
      }
      spec_.priority = static_cast<int>(p->as_integer()->get());
    }
    return Status::Ok();
  }

  // [tool.thresholds]: name = value, or name = {value, unit, description}.
  Status ParseThresholds() {
    const toml::table* thresholds = t_.get_as<toml::table>("thresholds");
    if (!thresholds) return Status::Ok();
    for (const auto& [key, value] : *thresholds) {
      ThresholdSpec spec_t;
      spec_t.name = std::string(key.str());
      if (value.is_number()) {
        spec_t.value = value.value<double>().value_or(0);
      } else if (const toml::table* detail = value.as_table()) {
        auto v = detail->get("value");
        if (!v || !v->is_number())
          return Status::InvalidArgument(where_ + ": threshold '" + spec_t.name +
                                         "' needs a numeric value");
        spec_t.value = v->value<double>().value_or(0);
        spec_t.unit = detail->get("unit") ? detail->get("unit")->value_or(std::string()) : "";
        spec_t.description =
            detail->get("description") ? detail->get("description")->value_or(std::string()) : "";
      } else {
        return Status::InvalidArgument(where_ + ": threshold '" + spec_t.name +
                                       "' must be a number or a table");
      }
      defined_.insert(spec_t.name);
      spec_.thresholds.push_back(spec_t);
    }
    return Status::Ok();
  }

  // [tool.let]: a let may use other lets; they are evaluated in dependency order (a cycle is an
  // error).
  Status ParseLets() {
    const toml::table* lets = t_.get_as<toml::table>("let");
    if (!lets) return Status::Ok();
    std::map<std::string, Expression> pending;
    for (const auto& [key, value] : *lets) {
      std::string let_name(key.str());
      if (!value.is_string())
        return Status::InvalidArgument(where_ + ": let '" + let_name +
                                       "' must be a string expression");
      auto e = Expression::Parse(value.as_string()->get());
      if (!e.ok())
        return Status::InvalidArgument(where_ + ": let " + let_name + ": " + e.status().message());
      pending.emplace(let_name, *e);
    }
    for (const auto& [name, e] : pending) defined_.insert(name);
    while (!pending.empty()) {
      auto ready = std::find_if(pending.begin(), pending.end(), [&](const auto& entry) {
        for (const std::string& n : entry.second.names()) {
          if (pending.contains(n)) return false;
        }
        return true;
      });
      if (ready == pending.end()) {
        return Status::InvalidArgument(where_ + ": the lets " + pending.begin()->first +
                                       ", ... depend on each other in a cycle");
      }
      for (const std::string& n : ready->second.names()) Reads(n);
      spec_.lets.emplace_back(ready->first, ready->second);
      pending.erase(ready);
    }
    return Status::Ok();
  }

  Status ParseTrigger() {
    auto trigger = Text("trigger", true);
    if (!trigger.ok()) return trigger.status();
    auto trigger_e = ParseExpression(*trigger, "trigger");
    if (!trigger_e.ok()) return trigger_e.status();
    spec_.trigger = *trigger_e;
    return Status::Ok();
  }

  // [[tool.severity]]: level, and a `when` expression except on the default.
  Status ParseSeverities() {
    const toml::array* rules = t_.get_as<toml::array>("severity");
    if (!rules) return Status::Ok();
    for (const toml::node& r : *rules) {
      const toml::table* rule = r.as_table();
      if (!rule)
        return Status::InvalidArgument(where_ + ": [[tool.severity]] entries must be tables");
      if (Status s = KeysKnown(*rule, {"when", "level"}, where_ + ": severity"); !s.ok()) return s;
      SeverityRule parsed;
      auto level = String(*rule, "level", where_ + ": severity", true);
      if (!level.ok()) return level.status();
      auto sev = ParseSeverity(*level);
      if (!sev.ok()) return Status::InvalidArgument(where_ + ": " + sev.status().message());
      parsed.level = *sev;
      auto when = String(*rule, "when", where_ + ": severity", false);
      if (!when.ok()) return when.status();
      if (!when->empty()) {
        auto e = ParseExpression(*when, "severity when");
        if (!e.ok()) return e.status();
        parsed.when = *e;
      }
      spec_.severities.push_back(std::move(parsed));
    }
    return Status::Ok();
  }

  // title (required), summary and root_cause are templates; code_example is verbatim.
  Status ParseTemplates() {
    for (auto [key, target] : {std::pair{"title", &spec_.title},
                               {"summary", &spec_.summary},
                               {"root_cause", &spec_.root_cause},
                               {"code_example", &spec_.code_example}}) {
      auto value = Text(key, std::string_view(key) == "title");
      if (!value.ok()) return value.status();
      if (std::string_view(key) == "code_example") {
        target->text = *value;  // code is shown verbatim: braces are C++ here, not templates
        continue;
      }
      auto parsed = ParseTemplate(*value);
      if (!parsed.ok())
        return Status::InvalidArgument(where_ + ": " + key + ": " + parsed.status().message());
      *target = *parsed;
    }
    return Status::Ok();
  }

  // [[tool.recommendation]]: action and expected, both templates. Then the names every template
  // reads, now that all of them are parsed.
  Status ParseRecommendations() {
    if (const toml::array* recs = t_.get_as<toml::array>("recommendation")) {
      for (const toml::node& r : *recs) {
        const toml::table* rec = r.as_table();
        if (!rec)
          return Status::InvalidArgument(where_ +
                                         ": [[tool.recommendation]] entries must be tables");
        if (Status s = KeysKnown(*rec, {"action", "expected"}, where_ + ": recommendation");
            !s.ok())
          return s;
        auto action = String(*rec, "action", where_ + ": recommendation", true);
        auto expected = String(*rec, "expected", where_ + ": recommendation", false);
        if (!action.ok()) return action.status();
        if (!expected.ok()) return expected.status();
        auto a = ParseTemplate(*action), e = ParseTemplate(*expected);
        if (!a.ok())
          return Status::InvalidArgument(where_ + ": recommendation: " + a.status().message());
        if (!e.ok())
          return Status::InvalidArgument(where_ + ": recommendation: " + e.status().message());
        spec_.recommendations.push_back({*a, *e});
      }
    }
    for (const Template* tpl : {&spec_.title, &spec_.summary, &spec_.root_cause}) {
      for (const std::string& n : tpl->names) Reads(n);
    }
    for (const RuleRecommendation& r : spec_.recommendations) {
      for (const Template* tpl : {&r.action, &r.expected}) {
        for (const std::string& n : tpl->names) Reads(n);
      }
    }
    return Status::Ok();
  }

  Status ParseObserved() {
    const toml::array* observed = t_.get_as<toml::array>("observed");
    if (!observed) return Status::Ok();
    for (const toml::node& o : *observed) {
      if (!o.is_string())
        return Status::InvalidArgument(where_ + ": observed entries must be names");
      spec_.observed.push_back(std::string(o.as_string()->get()));
      Reads(spec_.observed.back());
    }
    return Status::Ok();
  }

  // `required` as listed, plus whatever the expressions and templates read: a rule never runs on
  // a metric that is absent. Without the key: every metric read, in name order.
  Status ParseRequired() {
    const toml::array* required = t_.get_as<toml::array>("required");
    if (!required) {
      spec_.required.assign(metrics_.begin(), metrics_.end());
      return Status::Ok();
    }
    for (const toml::node& r : *required) {
      if (!r.is_string())
        return Status::InvalidArgument(where_ + ": required entries must be metric names");
      spec_.required.push_back(std::string(r.as_string()->get()));
    }
    for (const std::string& m : metrics_) {
      if (std::find(spec_.required.begin(), spec_.required.end(), m) == spec_.required.end())
        spec_.required.push_back(m);
    }
    return Status::Ok();
  }

  const toml::table& t_;
  const std::string& origin_;
  std::string where_;  // "<origin>: tool '<name>'" in errors, once the name is read
  RuleSpec spec_;
  std::set<std::string> defined_;  // thresholds and lets: not metrics
  std::set<std::string> metrics_;  // every other name read
};

Result<RuleSpec> ParseTool(const toml::table& t, const std::string& origin, std::size_t index) {
  return RuleSpecParser(t, origin, index).Parse();
}

}  // namespace

Result<std::vector<std::unique_ptr<ProfilingTool>>> ParseRuleTools(std::string_view toml_text,
                                                                   const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream message;
    message << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
            << e.description();
    return Status::InvalidArgument(message.str());
  }
  if (Status s = KeysKnown(root, {"tool"}, origin); !s.ok()) return s;
  const toml::array* tools = root.get_as<toml::array>("tool");
  if (!tools || tools->empty()) return Status::InvalidArgument(origin + ": no [[tool]] tables");
  std::vector<std::unique_ptr<ProfilingTool>> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < tools->size(); ++i) {
    const toml::table* t = (*tools)[i].as_table();
    if (!t)
      return Status::InvalidArgument(origin + ": [[tool]] #" + std::to_string(i + 1) +
                                     " is not a table");
    auto spec = ParseTool(*t, origin, i);
    if (!spec.ok()) return spec.status();
    if (!names.insert(spec->name).second) {
      return Status::InvalidArgument(origin + ": tool '" + spec->name + "' is defined twice");
    }
    out.push_back(std::make_unique<RuleTool>(std::move(*spec)));
  }
  return out;
}

Result<std::vector<std::unique_ptr<ProfilingTool>>> LoadRuleFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read rule file " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseRuleTools(buffer.str(), path);
}

}  // namespace kernelpro::tools
