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

Result<RuleSpec> ParseTool(const toml::table& t, const std::string& origin, std::size_t index) {
  std::string where = origin + ": [[tool]] #" + std::to_string(index + 1);
  RuleSpec spec;
  if (Status s = KeysKnown(t,
                           {"name", "source", "description", "bottlenecks", "priority", "required",
                            "trigger", "title", "summary", "root_cause", "observed", "code_example",
                            "thresholds", "let", "severity", "recommendation"},
                           where);
      !s.ok()) {
    return s;
  }
  auto name = String(t, "name", where, true);
  if (!name.ok()) return name.status();
  spec.name = *name;
  where = origin + ": tool '" + spec.name + "'";
  auto text = [&](std::string_view key, bool required) { return String(t, key, where, required); };
  auto source = text("source", false);
  if (!source.ok()) return source.status();
  if (!source->empty()) {
    auto parsed = ParseToolSource(*source);
    if (!parsed.ok()) return Status::InvalidArgument(where + ": " + parsed.status().message());
    spec.source = *parsed;
  }
  auto description = text("description", false);
  if (!description.ok()) return description.status();
  spec.description = *description;
  if (const toml::array* classes = t.get_as<toml::array>("bottlenecks")) {
    for (const toml::node& c : *classes) {
      auto b = c.is_string() ? roofline::ParseBottleneck(c.as_string()->get())
                             : Status::InvalidArgument("not a string");
      if (!b.ok()) return Status::InvalidArgument(where + ": bottlenecks: " + b.status().message());
      spec.bottlenecks.push_back(*b);
    }
  } else {
    spec.bottlenecks.assign(std::begin(roofline::kAllBottlenecks),
                            std::end(roofline::kAllBottlenecks));
  }
  if (const toml::node* p = t.get("priority")) {
    if (!p->is_integer()) return Status::InvalidArgument(where + ": 'priority' must be an integer");
    spec.priority = static_cast<int>(p->as_integer()->get());
  }
  std::set<std::string> defined;  // thresholds and lets: not metrics
  if (const toml::table* thresholds = t.get_as<toml::table>("thresholds")) {
    for (const auto& [key, value] : *thresholds) {
      ThresholdSpec spec_t;
      spec_t.name = std::string(key.str());
      if (value.is_number()) {
        spec_t.value = value.value<double>().value_or(0);
      } else if (const toml::table* detail = value.as_table()) {
        auto v = detail->get("value");
        if (!v || !v->is_number())
          return Status::InvalidArgument(where + ": threshold '" + spec_t.name +
                                         "' needs a numeric value");
        spec_t.value = v->value<double>().value_or(0);
        spec_t.unit = detail->get("unit") ? detail->get("unit")->value_or(std::string()) : "";
        spec_t.description =
            detail->get("description") ? detail->get("description")->value_or(std::string()) : "";
      } else {
        return Status::InvalidArgument(where + ": threshold '" + spec_t.name +
                                       "' must be a number or a table");
      }
      defined.insert(spec_t.name);
      spec.thresholds.push_back(spec_t);
    }
  }
  std::set<std::string> metrics;
  auto expression = [&](const std::string& source_text,
                        const std::string& what) -> Result<Expression> {
    auto e = Expression::Parse(source_text);
    if (!e.ok()) return Status::InvalidArgument(where + ": " + what + ": " + e.status().message());
    for (const std::string& n : e->names()) {
      if (!defined.contains(n)) metrics.insert(n);
    }
    return e;
  };
  if (const toml::table* lets = t.get_as<toml::table>("let")) {
    // A let may use other lets; they are evaluated in dependency order (a cycle is an error).
    std::map<std::string, Expression> pending;
    for (const auto& [key, value] : *lets) {
      std::string let_name(key.str());
      if (!value.is_string())
        return Status::InvalidArgument(where + ": let '" + let_name +
                                       "' must be a string expression");
      auto e = Expression::Parse(value.as_string()->get());
      if (!e.ok())
        return Status::InvalidArgument(where + ": let " + let_name + ": " + e.status().message());
      pending.emplace(let_name, *e);
    }
    for (const auto& [name, e] : pending) defined.insert(name);
    while (!pending.empty()) {
      auto ready = std::find_if(pending.begin(), pending.end(), [&](const auto& entry) {
        for (const std::string& n : entry.second.names()) {
          if (pending.contains(n)) return false;
        }
        return true;
      });
      if (ready == pending.end()) {
        return Status::InvalidArgument(where + ": the lets " + pending.begin()->first +
                                       ", ... depend on each other in a cycle");
      }
      for (const std::string& n : ready->second.names()) {
        if (!defined.contains(n)) metrics.insert(n);
      }
      spec.lets.emplace_back(ready->first, ready->second);
      pending.erase(ready);
    }
  }
  auto trigger = text("trigger", true);
  if (!trigger.ok()) return trigger.status();
  auto trigger_e = expression(*trigger, "trigger");
  if (!trigger_e.ok()) return trigger_e.status();
  spec.trigger = *trigger_e;
  if (const toml::array* rules = t.get_as<toml::array>("severity")) {
    for (const toml::node& r : *rules) {
      const toml::table* rule = r.as_table();
      if (!rule)
        return Status::InvalidArgument(where + ": [[tool.severity]] entries must be tables");
      if (Status s = KeysKnown(*rule, {"when", "level"}, where + ": severity"); !s.ok()) return s;
      SeverityRule parsed;
      auto level = String(*rule, "level", where + ": severity", true);
      if (!level.ok()) return level.status();
      auto sev = ParseSeverity(*level);
      if (!sev.ok()) return Status::InvalidArgument(where + ": " + sev.status().message());
      parsed.level = *sev;
      auto when = String(*rule, "when", where + ": severity", false);
      if (!when.ok()) return when.status();
      if (!when->empty()) {
        auto e = expression(*when, "severity when");
        if (!e.ok()) return e.status();
        parsed.when = *e;
      }
      spec.severities.push_back(std::move(parsed));
    }
  }
  std::vector<Template*> templates = {&spec.title, &spec.summary, &spec.root_cause};
  for (auto [key, target] : {std::pair{"title", &spec.title},
                             {"summary", &spec.summary},
                             {"root_cause", &spec.root_cause},
                             {"code_example", &spec.code_example}}) {
    auto value = text(key, std::string_view(key) == "title");
    if (!value.ok()) return value.status();
    if (std::string_view(key) == "code_example") {
      target->text = *value;  // code is shown verbatim: braces are C++ here, not templates
      continue;
    }
    auto parsed = ParseTemplate(*value);
    if (!parsed.ok())
      return Status::InvalidArgument(where + ": " + key + ": " + parsed.status().message());
    *target = *parsed;
  }
  if (const toml::array* recs = t.get_as<toml::array>("recommendation")) {
    for (const toml::node& r : *recs) {
      const toml::table* rec = r.as_table();
      if (!rec)
        return Status::InvalidArgument(where + ": [[tool.recommendation]] entries must be tables");
      if (Status s = KeysKnown(*rec, {"action", "expected"}, where + ": recommendation"); !s.ok())
        return s;
      auto action = String(*rec, "action", where + ": recommendation", true);
      auto expected = String(*rec, "expected", where + ": recommendation", false);
      if (!action.ok()) return action.status();
      if (!expected.ok()) return expected.status();
      auto a = ParseTemplate(*action), e = ParseTemplate(*expected);
      if (!a.ok())
        return Status::InvalidArgument(where + ": recommendation: " + a.status().message());
      if (!e.ok())
        return Status::InvalidArgument(where + ": recommendation: " + e.status().message());
      spec.recommendations.push_back({*a, *e});
    }
  }
  for (const Template* tpl : templates) {
    for (const std::string& n : tpl->names) {
      if (!defined.contains(n)) metrics.insert(n);
    }
  }
  for (const RuleRecommendation& r : spec.recommendations) {
    for (const Template* tpl : {&r.action, &r.expected}) {
      for (const std::string& n : tpl->names) {
        if (!defined.contains(n)) metrics.insert(n);
      }
    }
  }
  if (const toml::array* observed = t.get_as<toml::array>("observed")) {
    for (const toml::node& o : *observed) {
      if (!o.is_string())
        return Status::InvalidArgument(where + ": observed entries must be names");
      spec.observed.push_back(std::string(o.as_string()->get()));
      if (!defined.contains(spec.observed.back())) metrics.insert(spec.observed.back());
    }
  }
  if (const toml::array* required = t.get_as<toml::array>("required")) {
    for (const toml::node& r : *required) {
      if (!r.is_string())
        return Status::InvalidArgument(where + ": required entries must be metric names");
      spec.required.push_back(std::string(r.as_string()->get()));
    }
    // Whatever the expressions and templates read is required too: a rule never runs on a
    // metric that is absent.
    for (const std::string& m : metrics) {
      if (std::find(spec.required.begin(), spec.required.end(), m) == spec.required.end())
        spec.required.push_back(m);
    }
  } else {
    spec.required.assign(metrics.begin(), metrics.end());
  }
  return spec;
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
