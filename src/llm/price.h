// What a model's tokens cost, so the exchange hook can report money alongside tokens.
//
// A PriceTable maps model names to USD per million input and output tokens. An entry is either an
// exact model name ("gpt-4o") or a glob pattern ("claude-3-5-sonnet*", '*' any run of characters,
// '?' one character), so dated releases that servers report ("gpt-4o-2024-08-06") need no entry of
// their own. kernelpro ships no prices: they change, differ per account and region, and are zero
// for a local server. A model with no entry costs 0 and Find() says it is unknown, so a report can
// say "cost unknown" instead of inventing a number. Prices come from a TOML file:
//
//   [models."gpt-4o"]            # exact name
//   input_per_mtok = 2.5         # USD per million input tokens
//   output_per_mtok = 10         # USD per million output tokens
//
//   [models."claude-3-5-sonnet*"]
//   input_per_mtok = 3
//   output_per_mtok = 15
//
// (the numbers above illustrate the format; they are not maintained prices). A PriceTable is a
// plain value: build it, then share it read-only across threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "llm/config.h"
#include "llm/types.h"

namespace kernelpro::llm {

struct ModelPrice {
  std::string pattern;         // an exact model name, or a glob with '*' and '?'
  double input_per_mtok = 0;   // USD per million input tokens
  double output_per_mtok = 0;  // USD per million output tokens
};

class PriceTable {
 public:
  // Adds or replaces the entry with this pattern.
  void Set(ModelPrice price);

  // The entry for `model`: an exact name wins; otherwise the matching pattern with the most
  // literal characters (the most specific), on a tie the one that sorts first. nullopt when none
  // matches.
  std::optional<ModelPrice> Find(const std::string& model) const;

  // USD for `usage` on `model`; 0 when the model has no entry (check Find to tell "free" from
  // "unknown").
  double Cost(const std::string& model, const Usage& usage) const;

  bool empty() const { return prices_.empty(); }
  const std::vector<ModelPrice>& entries() const { return prices_; }

  // Reads the TOML form above. Errors name the file (`origin`) and the offending key.
  static Result<PriceTable> FromToml(std::string_view text, const std::string& origin);
  static Result<PriceTable> FromTomlFile(const std::string& path);

 private:
  std::vector<ModelPrice> prices_;
};

// Glob matching as PriceTable uses it ('*' any run, '?' one character, everything else literal).
bool GlobMatch(std::string_view pattern, std::string_view text);

// Whether the cost of `config`'s exchanges is known: its price table (prices_file) has an entry
// for its model. Without one every exchange counts $0, which means "unknown", never "free"; a
// local server reads $0 only when a price of 0 was configured for it. A replayed cassette costs
// nothing: its cost is known, $0.
// An unreadable table counts as no price.
bool CostKnown(const LlmConfig& config);

// "$0.0123" when `known`, else "unknown": how every command and report prints a run's cost.
std::string CostText(double usd, bool known);

}  // namespace kernelpro::llm
