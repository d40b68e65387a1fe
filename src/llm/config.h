// Which language model kernelpro talks to, and how: `--llm PROVIDER:MODEL[@BASE_URL]` on the
// command line or a named profile in a TOML file, with API keys read from the environment only.
//
//   --llm openai:gpt-4o                                   the OpenAI API (OPENAI_API_KEY)
//   --llm openai:gemma-3-270m@http://127.0.0.1:8080/v1    any OpenAI-compatible server (vLLM,
//                                                         SGLang, Ollama, llama.cpp); no key needed
//   --llm anthropic:claude-sonnet-4-5                     the Anthropic API (ANTHROPIC_API_KEY)
//   --llm bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0   Bedrock Converse (AWS credentials)
//   --llm replay:run.cassette.jsonl                       answers from a cassette, no network
//
// A profile file holds the same fields plus the ones the short form cannot say:
//
//   [profiles.local]
//   provider = "openai"
//   model = "gemma-3-270m"
//   base_url = "http://127.0.0.1:8080/v1"
//   timeout_s = 120
//
// A key goes only where it belongs (llm/key_policy.h): over https, or over plain http to a loopback
// address. A profile that names a plain-http base_url elsewhere on a network the user trusts says
// so explicitly, next to the key variable:
//
//   [profiles.lab]
//   provider = "openai"
//   base_url = "http://192.0.2.10:8000/v1"
//   api_key_env = "LAB_KEY"
//   allow_insecure_key = true      # send LAB_KEY to that URL over plain http
//
// Numbers in a profile are checked: finite and in range (timeouts > 0, counts >= 1); an error names
// the file, the profile, the key and what it accepts.
//
// Keys never live in an LlmConfig: it names the environment variable that holds them, so a config
// can be printed, logged and stored. Plain values; safe to copy across threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/json_io.h"
#include "core/status.h"
#include "llm/environment.h"

namespace kernelpro::llm {

struct LlmConfig {
  std::string provider;  // openai | anthropic | bedrock | replay
  std::string model;     // for replay: the cassette's path
  std::string base_url;  // "" = the provider's public endpoint
  // The environment variable holding the API key; "" = OPENAI_API_KEY for openai,
  // ANTHROPIC_API_KEY for anthropic. An OpenAI-compatible server at a base_url may need none.
  std::string api_key_env;
  // Send the key to base_url even over plain http to a host that is not a loopback address. Only a
  // profile (which names that base_url) can set it; `--llm` never does.
  bool allow_insecure_key = false;
  std::string region;       // bedrock: "" = AWS_REGION, then AWS_DEFAULT_REGION
  std::string aws_profile;  // bedrock: "" = AWS_PROFILE, then "default"
  // openai: ask for JSON-Schema structured output first (falls back by itself if refused).
  bool structured_output = true;
  std::string replay_mode = "fingerprint";  // replay: fingerprint | sequential
  // Sequential replay: recordings to skip per stream (see ReplayStream), because an earlier process
  // of the same run was served them (set by `kernelpro resume`, never read from a profile).
  std::map<std::string, int> replay_skip;
  std::string record_to;    // append every exchange to this cassette; "" = do not record
  std::string prices_file;  // TOML price table for the cost of each exchange; "" = cost unknown
  double connect_timeout_s = 10;  // to establish a connection
  double timeout_s = 600;         // for one whole HTTP exchange
  int max_attempts = 5;           // per request, retries included
  int max_concurrency = 4;        // requests in flight at once
  int max_tokens_cap = 32768;     // truncation recovery doubles max_tokens up to this
};

// `PROVIDER:MODEL[@BASE_URL]`. The model may itself contain ':' (Bedrock and Ollama ids); the
// base URL starts at the first '@' after the provider.
Result<LlmConfig> ParseLlmSpec(const std::string& spec);

// The profile `name` from a TOML file (see above); unknown keys, wrong types and numbers out of
// range (NaN and infinities included) are errors that name the file, the profile and the key.
Result<LlmConfig> LoadLlmProfile(const std::string& path, const std::string& name);

// What a log, a report or `llm ping --json` may show: everything but secrets (there are none in
// the config; the key's variable name is shown, never its value).
Json DescribeLlmConfig(const LlmConfig& config);

// The whole config (replay_skip aside: each process derives it) as a run stores it for `kernelpro
// resume`, and back; missing keys keep their defaults. Holds no secret, as the config holds none.
Json ToJson(const LlmConfig& config);
LlmConfig LlmConfigFromJson(const Json& json);

}  // namespace kernelpro::llm
