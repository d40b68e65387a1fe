#include "llm/price.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/text.h"

namespace kernelpro::llm {
namespace {

size_t LiteralCount(std::string_view pattern) {
  return static_cast<size_t>(
      std::count_if(pattern.begin(), pattern.end(), [](char c) { return c != '*' && c != '?'; }));
}

bool IsGlob(std::string_view pattern) {
  return pattern.find_first_of("*?") != std::string_view::npos;
}

// A price must be given, be a finite number and not be negative: a forgotten output price silently
// read as 0 would under-report spending.
Result<double> PriceField(const toml::table& entry, std::string_view key,
                          const std::string& where) {
  const toml::node* node = entry.get(key);
  if (node == nullptr) {
    return Status::InvalidArgument(where + ": '" + std::string(key) + "' is required");
  }
  std::optional<double> value = node->value<double>();
  if (!node->is_number() || !value) {
    return Status::InvalidArgument(where + ": '" + std::string(key) + "' must be a number");
  }
  // NaN passes every comparison as false, so "not below zero" must be said as "at or above".
  if (!std::isfinite(*value) || !(*value >= 0)) {
    return Status::InvalidArgument(where + ": '" + std::string(key) +
                                   "' must be a finite number >= 0");
  }
  return *value;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point: linear for the patterns prices use.
  size_t p = 0, t = 0, star = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_t = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

void PriceTable::Set(ModelPrice price) {
  for (ModelPrice& existing : prices_) {
    if (existing.pattern == price.pattern) {
      existing = std::move(price);
      return;
    }
  }
  prices_.push_back(std::move(price));
}

std::optional<ModelPrice> PriceTable::Find(const std::string& model) const {
  const ModelPrice* best = nullptr;
  for (const ModelPrice& price : prices_) {
    if (!IsGlob(price.pattern)) {
      if (price.pattern == model) return price;
      continue;
    }
    if (!GlobMatch(price.pattern, model)) continue;
    // Ties go to the pattern that sorts first, so the choice never depends on the order entries
    // were added in (toml++ iterates tables in key order, not file order).
    if (best == nullptr || LiteralCount(price.pattern) > LiteralCount(best->pattern) ||
        (LiteralCount(price.pattern) == LiteralCount(best->pattern) &&
         price.pattern < best->pattern)) {
      best = &price;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

double PriceTable::Cost(const std::string& model, const Usage& usage) const {
  std::optional<ModelPrice> price = Find(model);
  if (!price) return 0;
  return (static_cast<double>(usage.input_tokens) * price->input_per_mtok +
          static_cast<double>(usage.output_tokens) * price->output_per_mtok) /
         1e6;
}

Result<PriceTable> PriceTable::FromToml(std::string_view text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream message;
    message << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
            << e.description();
    return Status::InvalidArgument(message.str());
  }
  PriceTable table;
  for (const auto& [key, value] : root) {
    if (key.str() != "models") {
      return Status::InvalidArgument(origin + ": unknown key '" + std::string(key.str()) +
                                     "' (prices go under [models.\"<model>\"])");
    }
  }
  const toml::node* models_node = root.get("models");
  if (models_node == nullptr) return table;  // an empty file: no prices, every model unknown
  const toml::table* models = models_node->as_table();
  if (models == nullptr) return Status::InvalidArgument(origin + ": 'models' must be a table");
  for (const auto& [key, value] : *models) {
    std::string name(key.str());
    std::string where = origin + ": models.\"" + name + "\"";
    const toml::table* entry = value.as_table();
    if (entry == nullptr) {
      return Status::InvalidArgument(where +
                                     " must be a table with input_per_mtok and "
                                     "output_per_mtok");
    }
    for (const auto& [field, field_value] : *entry) {
      if (field.str() != "input_per_mtok" && field.str() != "output_per_mtok") {
        return Status::InvalidArgument(where + ": unknown key '" + std::string(field.str()) + "'");
      }
    }
    Result<double> input = PriceField(*entry, "input_per_mtok", where);
    if (!input.ok()) return input.status();
    Result<double> output = PriceField(*entry, "output_per_mtok", where);
    if (!output.ok()) return output.status();
    table.Set({name, *input, *output});
  }
  return table;
}

Result<PriceTable> PriceTable::FromTomlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot open price table " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return FromToml(buffer.str(), path);
}

bool CostKnown(const LlmConfig& config) {
  if (config.provider == "replay") return true;  // a replayed reply costs nothing
  if (config.prices_file.empty()) return false;
  auto prices = PriceTable::FromTomlFile(config.prices_file);
  return prices.ok() && prices->Find(config.model).has_value();
}

std::string CostText(double usd, bool known) {
  if (!known) return "unknown";
  return "$" + FormatFixed(usd, 4);
}

}  // namespace kernelpro::llm
