// `kernelpro resume RUN_DIR`: continues a run that stopped or was killed, from its run directory,
// with the options it was created with (cli/optimize_command.h runs it). Also what the run
// request of a suite task whose run already began runs (cli/run_request.h).
#pragma once

#include <string>
#include <vector>

#include "cli/option_groups.h"
#include "eval/executor.h"

namespace kernelpro::cli {

struct ResumeArgs {
  std::string run_dir;
  // Given only to be compared with the run's own: a run keeps its problem, search and device.
  std::string problem, search, device;
  eval::EvalOptions
      sandbox;          // only its sandbox options: --unsafe-no-sandbox, --pass-env, --sandbox-read
  SearchBudget budget;  // what is not given: the run's own
  LlmOptions llm;
  // The machine's own, for a run continued elsewhere: --gpus, --python; empty: the run's own.
  std::vector<std::string> gpus;
  std::string python;
  std::string nvml_library;  // --nvml-library: the machine's own
  bool quiet = false;        // --quiet: no progress on stderr
};

// Locks the run directory, reads the run's options, applies what `args` may change, checks that
// the LLM and the device answer, and runs it. The exit code (as optimize's).
int RunResume(ResumeArgs& args);

}  // namespace kernelpro::cli
