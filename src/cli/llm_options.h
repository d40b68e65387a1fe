// The options every command that talks to a language model shares (`llm ping`, and later
// `optimize`): which model (--llm or a profile), recording to a cassette. Declared once here.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "llm/config.h"

namespace kernelpro::cli {

struct LlmOptions {
  std::string spec;         // --llm PROVIDER:MODEL[@BASE_URL]  (env KERNELPRO_LLM)
  std::string config_file;  // --llm-config FILE.toml            (env KERNELPRO_LLM_CONFIG)
  std::string profile;      // --llm-profile NAME                (default "default")
  std::string record_to;    // --llm-record CASSETTE
  std::string prices_file;  // --llm-prices FILE.toml
};

void AddLlmOptions(CLI::App& command, LlmOptions& options);

// --llm wins over a profile; with neither, a clear error saying how to choose a model.
Result<llm::LlmConfig> ResolveLlmConfig(const LlmOptions& options);

}  // namespace kernelpro::cli
