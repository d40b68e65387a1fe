#include "cli/cli_main.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "core/version.h"

namespace kernelpro::cli {
namespace {

CliHooks& Hooks() {
  static CliHooks hooks;
  return hooks;
}

int ParseAndRun(int argc, char** argv) {
  CLI::App app{
      "kernelpro: build, check, time and optimise GPU kernels against a PyTorch reference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kernelpro ") + kKernelproVersion);
  const auto subcommands = RegisterSubcommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0, printed by CLI11; everything else is a usage
    // error, one line on stderr.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << UsageErrorLine(app, e) << "\n";
    return kUsageExit;
  }
  if (Hooks().stop_after_parse) return 0;
  for (const auto& [sub, runner] : subcommands) {
    if (sub != nullptr && sub->parsed()) return runner();
  }
  return kUsageExit;
}

}  // namespace

void InstallCliHooks(CliHooks hooks) { Hooks() = std::move(hooks); }

const CliHooks& InstalledCliHooks() { return Hooks(); }

int CliMain(int argc, char** argv) {
  try {
    return ParseAndRun(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kernelpro: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "kernelpro: stopped by an unexpected error\n";
  }
  return kUsageExit;
}

}  // namespace kernelpro::cli
