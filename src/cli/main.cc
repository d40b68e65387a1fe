// kernelpro: makes GPU kernels faster the way a human expert does. main() parses and dispatches.
//
// Exit codes: 0 success, 1 a command's own "nothing found" (optimize: no correct kernel), 2 a usage
// error (CLI11 has its own codes, 100 and up; every one of them is a usage error here, printed as
// one line by UsageErrorLine), bad input, or anything that stopped a command. No exception leaves
// main: the last-resort handler prints "kernelpro: <what>" and exits 2, rather than aborting with
// 134 and a core.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "core/termination.h"
#include "core/version.h"

namespace {

constexpr int kUsageError = kernelpro::cli::kUsageExit;

int Main(int argc, char** argv) {
  CLI::App app{
      "kernelpro: build, check, time and optimise GPU kernels against a PyTorch reference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kernelpro ") + kernelpro::kKernelproVersion);
  const auto subcommands = kernelpro::cli::RegisterSubcommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0, printed by CLI11; everything else is a usage
    // error, one line on stderr.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << kernelpro::cli::UsageErrorLine(app, e) << "\n";
    return kUsageError;
  }
  // KERNELPRO_PARSE_ONLY=1: stop once the arguments are read (tests/readme checks that the
  // README's commands that need a GPU or a key still parse).
  const char* parse_only = std::getenv("KERNELPRO_PARSE_ONLY");
  if (parse_only != nullptr && std::string(parse_only) == "1") return 0;
  for (const auto& [sub, runner] : subcommands) {
    if (sub != nullptr && sub->parsed()) return runner();
  }
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before any thread starts: SIGINT/SIGTERM kill the workers and stop (core/termination.h).
  kernelpro::InstallTerminationHandler();
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kernelpro: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "kernelpro: stopped by an unexpected error\n";
  }
  return kUsageError;
}
