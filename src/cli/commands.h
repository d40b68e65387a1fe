// Subcommands of the kernelpro binary. Each registers itself on the CLI11 app and runs when
// selected; main() only parses and dispatches. The list of them is one plain table, Subcommands(),
// which main() and option_groups_test.cc (every option of every subcommand declared once) share.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kernelpro::cli {

// Returns the process exit code once the subcommand has run.
using CommandRunner = std::function<int()>;

CommandRunner RegisterEvalCommand(CLI::App& app);
CommandRunner RegisterServeCommand(CLI::App& app);
CommandRunner RegisterProfileCommand(CLI::App& app);
CommandRunner RegisterCollectCommand(CLI::App& app);
CommandRunner RegisterAdviseCommand(CLI::App& app);
CommandRunner RegisterToolsCommand(CLI::App& app);
CommandRunner RegisterAnalyzeCommand(CLI::App& app);
CommandRunner RegisterLlmCommand(CLI::App& app);
CommandRunner RegisterPromptCommand(CLI::App& app);
CommandRunner RegisterOptimizeCommand(CLI::App& app);
CommandRunner RegisterResumeCommand(CLI::App& app);
CommandRunner RegisterReportCommand(CLI::App& app);
CommandRunner RegisterDoctorCommand(CLI::App& app);
CommandRunner RegisterNewProblemCommand(CLI::App& app);
CommandRunner RegisterCacheCommand(CLI::App& app);
CommandRunner RegisterSuiteCommand(CLI::App& app);
CommandRunner RegisterCutlassCommand(CLI::App& app);
CommandRunner RegisterEnergyCommand(CLI::App& app);
CommandRunner RegisterExportCommand(CLI::App& app);

// A subcommand: its name on the command line and the function that adds it (with its options) to
// the app and returns what runs it.
struct Subcommand {
  const char* name;
  CommandRunner (*Register)(CLI::App& app);
};

// Every subcommand, in the order --help lists them.
std::span<const Subcommand> Subcommands();

// Registers every subcommand on `app`: each one's CLI11 app with its runner, in Subcommands()
// order. An entry whose name is not the subcommand its function added has a null app.
std::vector<std::pair<CLI::App*, CommandRunner>> RegisterSubcommands(CLI::App& app);

// Exit code of every usage error: a bad option, a missing or unreadable input file, an option
// that does not fit the others. CLI11's own codes (100 and up) never reach the shell.
inline constexpr int kUsageExit = 2;

// The one line a usage error prints on stderr, after `app.parse` threw `error`: the command that
// was being parsed ("kernelpro eval"), what was wrong and where the options are listed:
//   kernelpro eval: --candidate is required (kernelpro eval --help lists the options)
// A command name that is not one ("kernelpro evl") is named as unknown, with the commands there
// are.
std::string UsageErrorLine(const CLI::App& app, const CLI::ParseError& error);

}  // namespace kernelpro::cli
