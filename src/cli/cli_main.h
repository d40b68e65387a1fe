// The kernelpro command line as one function, CliMain, and the hooks a test binary installs
// before calling it.
//
// main() (cli/main.cc) only installs the termination handler and calls CliMain. The tests' second
// binary, kernelpro_test_hooks (cli/test_hooks_main.cc, built only with the tests), first installs
// hooks it reads from its environment (where to kill itself, where scripts/setup's CUTLASS copy
// is looked for), then calls the same CliMain: the commands reach the hooks through
// InstalledCliHooks() and hand them on as seams (app::RunHooks, suite::RunnerOptions, the
// executor's device runner), so no production code reads a test's variable.
#pragma once

#include <functional>
#include <memory>

#include "app/run.h"
#include "eval/device_runner.h"

namespace kernelpro::cli {

struct CliHooks {
  // optimize and resume (and each task's run of `suite optimize`, in its own process).
  app::RunHooks run;
  // suite eval: after each candidate's verdict is saved.
  std::function<void()> after_suite_verdict;
  // eval: wraps the executor's device runner (eval/device_runner.h) in a decorator of the test's,
  // which forges what the runner reports (the speed of light's end-to-end test scales the
  // candidates' timed calls); unset: the executor's runner as it is.
  std::function<std::shared_ptr<eval::DeviceRunner>(std::shared_ptr<eval::DeviceRunner>)>
      device_runner;
  // Stop once the arguments are read, with exit 0 (tests/readme: the README's commands that need
  // a GPU or a key still parse).
  bool stop_after_parse = false;
};

// Installs `hooks` for every command CliMain runs afterwards. Call before CliMain and before any
// thread starts; never in production.
void InstallCliHooks(CliHooks hooks);
// The installed hooks; empty unless a test binary installed some.
const CliHooks& InstalledCliHooks();

// Parses the command line, runs the one subcommand it names and returns the process's exit code
// (cli/main.cc says which). No exception leaves it: the last-resort handler prints
// "kernelpro: <what>" and returns 2, rather than aborting with 134 and a core.
int CliMain(int argc, char** argv);

}  // namespace kernelpro::cli
