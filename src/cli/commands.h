// Subcommands of the kernelpro binary. Each registers itself on the CLI11 app and runs when
// selected; main() only parses and dispatches.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kernelpro::cli {

// Returns the process exit code once the subcommand has run.
using CommandRunner = std::function<int()>;

CommandRunner RegisterEvalCommand(CLI::App& app);
CommandRunner RegisterProfileCommand(CLI::App& app);
CommandRunner RegisterCollectCommand(CLI::App& app);
CommandRunner RegisterAdviseCommand(CLI::App& app);
CommandRunner RegisterToolsCommand(CLI::App& app);
CommandRunner RegisterAnalyzeCommand(CLI::App& app);
CommandRunner RegisterLlmCommand(CLI::App& app);
CommandRunner RegisterPromptCommand(CLI::App& app);
CommandRunner RegisterOptimizeCommand(CLI::App& app);
CommandRunner RegisterResumeCommand(CLI::App& app);

}  // namespace kernelpro::cli
