#include "cli/commands.h"

#include <array>
#include <iostream>
#include <string>

#include "core/text.h"

namespace kernelpro::cli {

#if !KERNELPRO_HAVE_SERVE
// A build without cpp-httplib (CMakeLists.txt) has no server: `serve` says so and how to get one.
CommandRunner RegisterServeCommand(CLI::App& app) {
  app.add_subcommand("serve", "Serve the harness over HTTP (not in this build: no cpp-httplib)")
      ->allow_extras();
  return [] {
    std::cerr << "kernelpro serve: this kernelpro was built without cpp-httplib: install "
                 "libcpp-httplib-dev (scripts/setup) and rebuild\n";
    return kUsageExit;
  };
}
#endif

namespace {

constexpr std::array<Subcommand, 19> kSubcommands = {{
    {"eval", RegisterEvalCommand},       {"serve", RegisterServeCommand},
    {"profile", RegisterProfileCommand}, {"collect", RegisterCollectCommand},
    {"advise", RegisterAdviseCommand},   {"tools", RegisterToolsCommand},
    {"analyze", RegisterAnalyzeCommand}, {"llm", RegisterLlmCommand},
    {"prompt", RegisterPromptCommand},   {"optimize", RegisterOptimizeCommand},
    {"resume", RegisterResumeCommand},   {"report", RegisterReportCommand},
    {"doctor", RegisterDoctorCommand},   {"new-problem", RegisterNewProblemCommand},
    {"cache", RegisterCacheCommand},     {"suite", RegisterSuiteCommand},
    {"cutlass", RegisterCutlassCommand}, {"energy", RegisterEnergyCommand},
    {"export", RegisterExportCommand},
}};

}  // namespace

std::span<const Subcommand> Subcommands() { return kSubcommands; }

std::vector<std::pair<CLI::App*, CommandRunner>> RegisterSubcommands(CLI::App& app) {
  std::vector<std::pair<CLI::App*, CommandRunner>> registered;
  for (const Subcommand& subcommand : Subcommands()) {
    CommandRunner runner = subcommand.Register(app);
    // Looked up by name (CLI11 2.1 has no non-throwing get_subcommand).
    std::vector<CLI::App*> named = app.get_subcommands(
        [&](CLI::App* sub) { return sub->get_name() == std::string(subcommand.name); });
    registered.emplace_back(named.empty() ? nullptr : named.front(), std::move(runner));
  }
  return registered;
}

std::string UsageErrorLine(const CLI::App& app, const CLI::ParseError& error) {
  // The deepest subcommand the parse reached is the one the error is about.
  const CLI::App* where = &app;
  std::string command = "kernelpro";
  for (std::vector<CLI::App*> parsed = where->get_subcommands(); !parsed.empty();
       parsed = where->get_subcommands()) {
    where = parsed.front();
    command += " " + where->get_name();
  }
  std::string what = error.what();
  // CLI11 says "A subcommand is required" also when the word given was no command: name it.
  const std::vector<const CLI::App*> commands = where->get_subcommands({});
  if (!commands.empty() && error.get_name() == "RequiredError") {
    std::vector<std::string> names;
    for (const CLI::App* sub : commands) names.push_back(sub->get_name());
    const std::vector<std::string> left = where->remaining();
    // An option before any command ("kernelpro --bogus") is named: it is what was mistyped.
    what = (left.empty() ? std::string("a command is required")
            : left.front().starts_with("-")
                ? "unknown option '" + left.front() + "' before a command; give a command first"
                : "unknown command '" + left.front() + "'") +
           ": one of " + Join(names, ", ");
  }
  // One line: CLI11 puts some lists on lines of their own.
  for (char& c : what) {
    if (c == '\n') c = ' ';
  }
  while (!what.empty() && what.back() == ' ') what.pop_back();
  // A bad value names its option and what is accepted; other errors are about the options
  // themselves, and --help lists them.
  const std::string name = error.get_name();
  if (name == "ValidationError" || name == "ConversionError") return command + ": " + what;
  return command + ": " + what + " (" + command + " --help lists the options)";
}

}  // namespace kernelpro::cli
