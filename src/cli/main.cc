// kernelpro: makes GPU kernels faster the way a human expert does. main() parses and dispatches
// (cli/cli_main.h).
//
// Exit codes: 0 success, 1 a command's own "nothing found" (optimize: no correct kernel), 2 a usage
// error (CLI11 has its own codes, 100 and up; every one of them is a usage error here, printed as
// one line by UsageErrorLine), bad input, or anything that stopped a command. No exception leaves
// main: the last-resort handler prints "kernelpro: <what>" and exits 2, rather than aborting with
// 134 and a core.
#include "cli/cli_main.h"
#include "core/termination.h"

int main(int argc, char** argv) {
  // First, before any thread starts: SIGINT/SIGTERM kill the workers and stop (core/termination.h).
  kernelpro::InstallTerminationHandler();
  return kernelpro::cli::CliMain(argc, argv);
}
