// Choosing a model: the --llm short form and TOML profiles, with errors a user can act on.
#include "llm/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kernelpro::llm {
namespace llm_config_test {

TEST(LlmConfigTest, ShortFormNamesProviderModelAndServer) {
  auto c = ParseLlmSpec("openai:gemma-3-270m@http://127.0.0.1:8080/v1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->provider, "openai");
  EXPECT_EQ(c->model, "gemma-3-270m");
  EXPECT_EQ(c->base_url, "http://127.0.0.1:8080/v1");
  // Model ids with ':' (Bedrock, Ollama) stay whole.
  auto b = ParseLlmSpec("bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->model, "anthropic.claude-3-5-sonnet-20240620-v1:0");
  EXPECT_EQ(ParseLlmSpec("openai:llama3:8b@http://localhost:11434/v1")->model, "llama3:8b");
  EXPECT_EQ(ParseLlmSpec("replay:runs/a@b/cassette.jsonl")->model, "runs/a@b/cassette.jsonl");
}

TEST(LlmConfigTest, ShortFormErrorsSayWhatToWrite) {
  auto none = ParseLlmSpec("gpt-4o");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("expected PROVIDER:MODEL[@BASE_URL]"), std::string::npos);
  auto unknown = ParseLlmSpec("gemini:pro");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown provider 'gemini'"), std::string::npos);
  EXPECT_FALSE(ParseLlmSpec("openai:").ok());
  EXPECT_FALSE(ParseLlmSpec("replay:").ok());
  auto url = ParseLlmSpec("openai:m@localhost:8080");
  ASSERT_FALSE(url.ok());
  EXPECT_NE(url.status().message().find("must start with http://"), std::string::npos);
}

class LlmProfileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    std::string path = ::testing::TempDir() + "/llm_profiles.toml";
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(LlmProfileTest, ReadsANamedProfile) {
  std::string path = Write(R"(
[profiles.local]
provider = "openai"
model = "gemma-3-270m"
base_url = "http://127.0.0.1:8080/v1"
structured_output = false
timeout_s = 120
max_attempts = 2

[profiles.claude]
provider = "bedrock"
model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
region = "us-west-2"
)");
  auto c = LoadLlmProfile(path, "local");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->base_url, "http://127.0.0.1:8080/v1");
  EXPECT_FALSE(c->structured_output);
  EXPECT_EQ(c->timeout_s, 120);
  EXPECT_EQ(c->max_attempts, 2);
  EXPECT_EQ(LoadLlmProfile(path, "claude")->region, "us-west-2");
  auto missing = LoadLlmProfile(path, "gpt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no profile 'gpt' (it has: claude, local)"),
            std::string::npos)
      << missing.status().message();
}

TEST_F(LlmProfileTest, RejectsKeysInFilesUnknownKeysAndWrongTypes) {
  auto key = LoadLlmProfile(
      Write("[profiles.p]\nprovider = \"openai\"\nmodel = \"m\"\napi_key = \"sk-123\"\n"), "p");
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("api_key_env"), std::string::npos);
  EXPECT_EQ(key.status().message().find("sk-123"), std::string::npos) << "never echo a secret";
  auto typo = LoadLlmProfile(Write("[profiles.p]\nprovider = \"openai\"\nmodle = \"m\"\n"), "p");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("unknown key 'modle'"), std::string::npos);
  auto type = LoadLlmProfile(
      Write("[profiles.p]\nprovider = \"openai\"\nmodel = \"m\"\nmax_attempts = \"3\"\n"), "p");
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.status().message().find("'max_attempts' must be an integer"), std::string::npos);
  auto syntax = LoadLlmProfile(Write("[profiles.p\n"), "p");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("llm_profiles.toml:1"), std::string::npos)
      << syntax.status().message();
  EXPECT_FALSE(LoadLlmProfile("/no/such/file.toml", "p").ok());
}

TEST_F(LlmProfileTest, NumbersMustBeFiniteAndInRangeAndTheErrorSaysWhere) {
  auto error = [&](const std::string& line) {
    auto c =
        LoadLlmProfile(Write("[profiles.p]\nprovider = \"openai\"\nmodel = \"m\"\n" + line), "p");
    return c.ok() ? std::string("(accepted)") : c.status().message();
  };
  // An infinite or NaN timeout is no timeout at all.
  std::string nan = error("timeout_s = nan\n");
  EXPECT_NE(nan.find("llm_profiles.toml, profile 'p': 'timeout_s' = nan is not accepted: give a "
                     "finite number > 0 and <= 86400"),
            std::string::npos)
      << nan;
  EXPECT_NE(error("timeout_s = inf\n").find("'timeout_s' = inf"), std::string::npos);
  EXPECT_NE(error("connect_timeout_s = -1.5\n").find("'connect_timeout_s' = -1.5"),
            std::string::npos);
  EXPECT_NE(error("timeout_s = 0\n").find("'timeout_s' = 0 is not accepted"), std::string::npos);
  EXPECT_NE(error("max_attempts = 0\n")
                .find("'max_attempts' = 0 is not accepted: give a finite "
                      "number from 1 to 100"),
            std::string::npos);
  EXPECT_NE(error("max_concurrency = -3\n").find("'max_concurrency' = -3"), std::string::npos);
  // 2^32 + 1 once narrowed to int as 1.
  EXPECT_NE(error("max_tokens_cap = 4294967297\n").find("'max_tokens_cap' = 4294967297"),
            std::string::npos);
  EXPECT_EQ(error("timeout_s = 0.5\nmax_attempts = 1\nmax_tokens_cap = 1000\n"), "(accepted)");
}

TEST_F(LlmProfileTest, AllowInsecureKeyIsABooleanForTheProfilesOwnBaseUrl) {
  std::string path = Write(R"(
[profiles.lab]
provider = "openai"
model = "m"
base_url = "http://192.0.2.10:8000/v1"
api_key_env = "LAB_KEY"
allow_insecure_key = true

[profiles.nourl]
provider = "openai"
model = "m"
allow_insecure_key = true

[profiles.text]
provider = "openai"
model = "m"
base_url = "http://192.0.2.10:8000/v1"
allow_insecure_key = "yes"
)");
  auto lab = LoadLlmProfile(path, "lab");
  ASSERT_TRUE(lab.ok()) << lab.status().ToString();
  EXPECT_TRUE(lab->allow_insecure_key);
  EXPECT_EQ(DescribeLlmConfig(*lab)["allow_insecure_key"], true);
  auto nourl = LoadLlmProfile(path, "nourl");
  ASSERT_FALSE(nourl.ok());
  EXPECT_NE(nourl.status().message().find("give base_url"), std::string::npos);
  auto text = LoadLlmProfile(path, "text");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("'allow_insecure_key' must be true or false"),
            std::string::npos);
  // The short form has no way to say it.
  EXPECT_FALSE(ParseLlmSpec("openai:m@http://192.0.2.10:8000/v1")->allow_insecure_key);
}

TEST(LlmConfigTest, DescriptionNamesTheKeyVariableNotTheKey) {
  LlmConfig c = *ParseLlmSpec("anthropic:claude-sonnet-4-5");
  c.api_key_env = "TEAM_ANTHROPIC_KEY";
  Json d = DescribeLlmConfig(c);
  EXPECT_EQ(d["provider"], "anthropic");
  EXPECT_EQ(d["api_key_env"], "TEAM_ANTHROPIC_KEY");
}

}  // namespace llm_config_test
}  // namespace kernelpro::llm
