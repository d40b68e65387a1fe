// Runs the kernelpro binary the tests built, as a user would, and keeps what it printed; or the
// tests' twin of it that installs test hooks (RunKernelproWithHooks).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/subprocess.h"

namespace kernelpro::testing {

struct CliRun {
  int exit_code = -1;
  std::string out, err;
  Json json;  // stdout parsed as JSON (discarded when it is not)
};

// `binary` run with `args`, `env` added to its environment and `unset_env` removed from it.
inline CliRun RunBinary(const std::string& binary, const std::vector<std::string>& args,
                        int timeout_minutes, const std::map<std::string, std::string>& env,
                        const std::vector<std::string>& unset_env) {
  ProcessOptions p;
  p.env = env;
  p.unset_env = unset_env;
  p.argv = {binary};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.limits.wall_timeout = std::chrono::minutes(timeout_minutes);
  p.capture_bytes = 1 << 20;
  CliRun run;
  auto r = RunProcess(p);
  if (!r.ok()) return run;
  run.exit_code = r->exit_code;
  run.out = r->stdout_text;
  run.err = r->stderr_text;
  run.json = Json::parse(run.out, nullptr, false);
  return run;
}

inline CliRun RunKernelpro(const std::vector<std::string>& args, int timeout_minutes = 5,
                           const std::map<std::string, std::string>& env = {},
                           const std::vector<std::string>& unset_env = {}) {
  return RunBinary(KERNELPRO_BINARY, args, timeout_minutes, env, unset_env);
}

// The same command line run by kernelpro_test_hooks (cli/test_hooks_main.cc), which installs the
// hooks its KERNELPRO_TEST_* variables in `env` ask for (kill after a journal step, an exchange or
// a suite's verdict; another folder for scripts/setup's CUTLASS copy). kernelpro itself reads none
// of them.
inline CliRun RunKernelproWithHooks(const std::vector<std::string>& args, int timeout_minutes,
                                    const std::map<std::string, std::string>& env,
                                    const std::vector<std::string>& unset_env = {}) {
  return RunBinary(KERNELPRO_TEST_HOOKS_BINARY, args, timeout_minutes, env, unset_env);
}

}  // namespace kernelpro::testing
