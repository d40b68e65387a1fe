// Runs the kernelpro binary the tests built, as a user would, and keeps what it printed.
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

inline CliRun RunKernelpro(const std::vector<std::string>& args, int timeout_minutes = 5,
                           const std::map<std::string, std::string>& env = {},
                           const std::vector<std::string>& unset_env = {}) {
  ProcessOptions p;
  p.env = env;
  p.unset_env = unset_env;
  p.argv = {KERNELPRO_BINARY};
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

}  // namespace kernelpro::testing
