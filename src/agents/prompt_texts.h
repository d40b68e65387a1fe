// The prompt components the PromptBuilder assembles: the Markdown files under src/prompts,
// compiled into the binary at build time (cmake/embed_prompts.cmake), so that a prompt never
// depends on the working directory or on an installed copy of the sources.
//
// The map is built once and never changes; read it from any thread.
#pragma once

#include <map>
#include <string>

namespace kernelpro::agents {

// File name without ".md" (e.g. "gpu_sm90") -> the file's exact bytes.
const std::map<std::string, std::string>& PromptTexts();

}  // namespace kernelpro::agents
