// Price tables: which entry prices a model, what tokens cost, unknown models reported as unknown,
// and the TOML form with errors that name the file and the key.
#include "llm/price.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace kernelpro::llm {
namespace llm_price_test {

TEST(PriceTableTest, CostIsTokensTimesPricePerMillion) {
  PriceTable table;
  table.Set({"gpt-4o", 2.5, 10});
  EXPECT_DOUBLE_EQ(table.Cost("gpt-4o", {1'000'000, 0}), 2.5);
  EXPECT_DOUBLE_EQ(table.Cost("gpt-4o", {200'000, 50'000}), 0.5 + 0.5);
  EXPECT_DOUBLE_EQ(table.Cost("gpt-4o", {0, 0}), 0);
}

TEST(PriceTableTest, UnknownModelCostsZeroAndIsReportedUnknown) {
  PriceTable table;
  table.Set({"gpt-4o", 2.5, 10});
  EXPECT_FALSE(table.Find("llama-3-70b").has_value());
  EXPECT_EQ(table.Cost("llama-3-70b", {1'000'000, 1'000'000}), 0);
  // An exact entry does not match longer names: "gpt-4o" is not "gpt-4o-mini".
  EXPECT_FALSE(table.Find("gpt-4o-mini").has_value());
}

TEST(PriceTableTest, ExactNameBeatsPatternsAndTheMostSpecificPatternWins) {
  PriceTable table;
  table.Set({"claude-*", 1, 1});
  table.Set({"claude-3-5-sonnet*", 3, 15});
  table.Set({"claude-3-5-sonnet-20240620", 9, 9});
  EXPECT_EQ(table.Find("claude-3-5-sonnet-20241022")->pattern, "claude-3-5-sonnet*");
  EXPECT_EQ(table.Find("claude-3-5-sonnet-20240620")->pattern, "claude-3-5-sonnet-20240620");
  EXPECT_EQ(table.Find("claude-3-haiku")->pattern, "claude-*");
  EXPECT_DOUBLE_EQ(table.Cost("claude-3-5-sonnet-latest", {1'000'000, 1'000'000}), 18);
  // Bedrock-style ids: a pattern may match anywhere.
  table.Set({"*claude-3-haiku*", 0.25, 1.25});
  EXPECT_EQ(table.Find("anthropic.claude-3-haiku-20240307-v1:0")->pattern, "*claude-3-haiku*");
  // Set replaces an entry with the same pattern.
  table.Set({"claude-*", 2, 2});
  EXPECT_EQ(table.entries().size(), 4u);
  EXPECT_EQ(table.Find("claude-2")->input_per_mtok, 2);
}

TEST(PriceTableTest, GlobMatching) {
  EXPECT_TRUE(GlobMatch("gpt-4o*", "gpt-4o"));
  EXPECT_TRUE(GlobMatch("gpt-4o*", "gpt-4o-2024-08-06"));
  EXPECT_TRUE(GlobMatch("gpt-?o", "gpt-4o"));
  EXPECT_TRUE(GlobMatch("*-mini*", "gpt-4o-mini-2024"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatch("gpt-4o*", "gpt-4"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbYbZ"));
  EXPECT_FALSE(GlobMatch("gpt-?o", "gpt-4xo"));
}

TEST(PriceTableTest, ReadsTheTomlForm) {
  auto table = PriceTable::FromToml(R"(
# USD per million tokens
[models."gpt-4o"]
input_per_mtok = 2.5
output_per_mtok = 10

[models."claude-3-5-sonnet*"]
input_per_mtok = 3
output_per_mtok = 15

[models.local]
input_per_mtok = 0
output_per_mtok = 0
)",
                                    "prices.toml");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->entries().size(), 3u);
  EXPECT_DOUBLE_EQ(table->Cost("gpt-4o", {1'000'000, 1'000'000}), 12.5);
  EXPECT_DOUBLE_EQ(table->Cost("claude-3-5-sonnet-20241022", {0, 1'000'000}), 15);
  EXPECT_TRUE(table->Find("local").has_value());  // known and free, unlike an unknown model
  EXPECT_EQ(table->Cost("local", {5, 5}), 0);
  EXPECT_TRUE(PriceTable::FromToml("", "empty.toml")->empty());
}

TEST(PriceTableTest, TomlErrorsNameTheFileAndTheKey) {
  auto message = [](const char* text) {
    auto t = PriceTable::FromToml(text, "prices.toml");
    return t.ok() ? std::string("(accepted)") : t.status().message();
  };
  EXPECT_EQ(message("[models.\"gpt-4o\"]\ninput_per_mtok = 2.5\n"),
            "prices.toml: models.\"gpt-4o\": 'output_per_mtok' is required");
  EXPECT_EQ(message("[models.m]\ninput_per_mtok = \"2.5\"\noutput_per_mtok = 1\n"),
            "prices.toml: models.\"m\": 'input_per_mtok' must be a number");
  EXPECT_EQ(message("[models.m]\ninput_per_mtok = -1\noutput_per_mtok = 1\n"),
            "prices.toml: models.\"m\": 'input_per_mtok' must be a finite number >= 0");
  // NaN compares false with everything, so it once passed as "not negative"; inf made every
  // exchange cost inf and stopped a --max-cost run at once.
  EXPECT_EQ(message("[models.m]\ninput_per_mtok = nan\noutput_per_mtok = 1\n"),
            "prices.toml: models.\"m\": 'input_per_mtok' must be a finite number >= 0");
  EXPECT_EQ(message("[models.m]\ninput_per_mtok = 1\noutput_per_mtok = inf\n"),
            "prices.toml: models.\"m\": 'output_per_mtok' must be a finite number >= 0");
  EXPECT_EQ(message("[models.m]\ninput_per_mtok = 1\noutput_per_mtok = 1\ncached = 0.5\n"),
            "prices.toml: models.\"m\": unknown key 'cached'");
  EXPECT_EQ(message("[model.m]\ninput_per_mtok = 1\n"),
            "prices.toml: unknown key 'model' (prices go under [models.\"<model>\"])");
  EXPECT_EQ(message("[models]\nm = 3\n"),
            "prices.toml: models.\"m\" must be a table with input_per_mtok and output_per_mtok");
  std::string syntax = message("[models.m\ninput_per_mtok = 1\n");
  EXPECT_EQ(syntax.rfind("prices.toml:1:", 0), 0u) << syntax;  // file, line and column
}

TEST(PriceTableTest, ReadsAFileAndReportsAMissingOne) {
  std::string path = ::testing::TempDir() + "/llm_price_test.toml";
  {
    std::ofstream out(path);
    out << "[models.\"gpt-4o\"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10\n";
  }
  auto table = PriceTable::FromTomlFile(path);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_DOUBLE_EQ(table->Cost("gpt-4o", {0, 100'000}), 1.0);
  std::remove(path.c_str());
  auto missing = PriceTable::FromTomlFile(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
}

// A cost is "unknown" unless a price was configured for the model, even a price of 0; a replayed
// cassette buys nothing, so its cost is known: $0.
TEST(CostTextTest, UnknownWithoutAConfiguredPriceAndZeroOnlyWhenConfigured) {
  LlmConfig config;
  config.provider = "openai";
  config.model = "local-model";
  EXPECT_FALSE(CostKnown(config));
  EXPECT_EQ(CostText(0, CostKnown(config)), "unknown");
  const std::string dir = ::testing::TempDir();
  const std::string free_prices = dir + "/kp_free_prices.toml";
  std::ofstream(free_prices) << "[models.\"*\"]\ninput_per_mtok = 0\noutput_per_mtok = 0\n";
  config.prices_file = free_prices;
  EXPECT_TRUE(CostKnown(config));
  EXPECT_EQ(CostText(0, CostKnown(config)), "$0.0000");
  const std::string other = dir + "/kp_other_prices.toml";
  std::ofstream(other) << "[models.\"gpt-4o\"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10\n";
  config.prices_file = other;
  EXPECT_FALSE(CostKnown(config));
  EXPECT_EQ(CostText(0.0421, true), "$0.0421");
}

TEST(CostTextTest, AReplayedCassetteCostsNothing) {
  LlmConfig config;
  config.provider = "replay";
  config.model = "/tmp/demo.jsonl";
  EXPECT_TRUE(CostKnown(config));
  EXPECT_EQ(CostText(0, CostKnown(config)), "$0.0000");
}

}  // namespace llm_price_test
}  // namespace kernelpro::llm
