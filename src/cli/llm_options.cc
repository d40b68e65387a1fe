#include "cli/llm_options.h"

namespace kernelpro::cli {

void AddLlmOptions(CLI::App& command, LlmOptions& options) {
  command
      .add_option("--llm", options.spec,
                  "Model as PROVIDER:MODEL[@BASE_URL]: openai:gpt-4o, "
                  "openai:NAME@http://127.0.0.1:8080/v1 (any OpenAI-compatible server), "
                  "anthropic:MODEL, bedrock:MODEL_ID, replay:CASSETTE")
      ->envname("KERNELPRO_LLM");
  command
      .add_option("--llm-config", options.config_file,
                  "TOML file with [profiles.NAME] tables (provider, model, base_url, ...)")
      ->envname("KERNELPRO_LLM_CONFIG");
  command.add_option("--llm-profile", options.profile,
                     "Profile to use from --llm-config (default: \"default\")");
  command.add_option("--llm-record", options.record_to,
                     "Append every LLM exchange to this cassette (replay it with "
                     "--llm replay:CASSETTE)");
  command.add_option("--llm-prices", options.prices_file,
                     "TOML price table ([models.\"NAME\"] input_per_mtok, output_per_mtok) for "
                     "the cost of each exchange");
}

Result<llm::LlmConfig> ResolveLlmConfig(const LlmOptions& options) {
  Result<llm::LlmConfig> config = Status::InvalidArgument(
      "no model chosen: give --llm PROVIDER:MODEL[@BASE_URL] (or set KERNELPRO_LLM), or "
      "--llm-config FILE [--llm-profile NAME]");
  if (!options.spec.empty()) {
    config = llm::ParseLlmSpec(options.spec);
  } else if (!options.config_file.empty()) {
    config = llm::LoadLlmProfile(options.config_file,
                                 options.profile.empty() ? "default" : options.profile);
  } else if (!options.profile.empty()) {
    return Status::InvalidArgument("--llm-profile needs --llm-config FILE");
  }
  if (!config.ok()) return config;
  if (!options.record_to.empty()) config->record_to = options.record_to;
  if (!options.prices_file.empty()) config->prices_file = options.prices_file;
  if (config->provider == "replay" && !config->record_to.empty()) {
    return Status::InvalidArgument("--llm-record with replay: a replayed run records nothing new");
  }
  return config;
}

}  // namespace kernelpro::cli
