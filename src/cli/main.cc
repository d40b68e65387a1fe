// kernelpro: makes GPU kernels faster the way a human expert does. main() parses and dispatches.
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "core/termination.h"

int main(int argc, char** argv) {
  // First, before any thread starts: SIGINT/SIGTERM kill the workers and stop (core/termination.h).
  kernelpro::InstallTerminationHandler();
  CLI::App app{
      "kernelpro: build, check, time and optimise GPU kernels against a PyTorch reference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kernelpro 0.1.0");
  std::map<CLI::App*, kernelpro::cli::CommandRunner> runners;
  auto add = [&](kernelpro::cli::CommandRunner runner) {
    runners[app.get_subcommands({}).back()] = runner;
  };
  add(kernelpro::cli::RegisterEvalCommand(app));
  add(kernelpro::cli::RegisterProfileCommand(app));
  add(kernelpro::cli::RegisterCollectCommand(app));
  add(kernelpro::cli::RegisterAdviseCommand(app));
  add(kernelpro::cli::RegisterToolsCommand(app));
  add(kernelpro::cli::RegisterAnalyzeCommand(app));
  add(kernelpro::cli::RegisterLlmCommand(app));
  add(kernelpro::cli::RegisterPromptCommand(app));
  add(kernelpro::cli::RegisterOptimizeCommand(app));
  add(kernelpro::cli::RegisterResumeCommand(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& [sub, runner] : runners) {
    if (sub->parsed()) return runner();
  }
  return 2;
}
