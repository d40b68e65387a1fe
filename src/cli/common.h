// Pieces shared by the subcommands: default directories and the executor they all start from.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "eval/executor.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::cli {

// $XDG_CACHE_HOME/kernelpro, else ~/.cache/kernelpro: builds and references shared by runs.
std::string DefaultCacheDir();

// The executor options every command that evaluates candidates shares (`eval`, `optimize`):
// trials, timing, tolerances, policies, parallel builds, timeouts, directories and the
// interpreter, declared once. --device, --seed and --build-only are each command's own.
void AddExecutorOptions(CLI::App& command, EvalOptions& o, std::string& python);

// The sandbox's options (--unsafe-no-sandbox, --pass-env, --sandbox-read), for every command that
// runs candidate code; AddExecutorOptions includes them.
void AddSandboxOptions(CLI::App& command, EvalOptions& o);

// Splits the values of --gpus on commas ("--gpus 0,1" and "--gpus 0 --gpus 1" both give
// {"0", "1"}) and checks them: each a device ordinal (digits only, not empty), none twice.
// InvalidArgument names the bad value. Idempotent.
Status NormalizeGpus(std::vector<std::string>& gpus);

// Checks --gpus (NormalizeGpus), fills empty cache/work directories with their defaults and starts
// a worker client. On failure prints the reason to stderr and returns nullopt (the caller exits
// with 2).
std::optional<Executor> MakeExecutor(EvalOptions& options, const std::string& python,
                                     const char* command_name);

// Stage 1, theoretical side: agents::RunStageOne (agents/benchmarking_agent.h), where the
// benchmarking agent lives. The measured side (ncu) is the caller's.
Result<ReferenceAnalysis> RunStageOne(Executor& executor, const std::string& problem,
                                      const std::optional<GpuSpec>& forced,
                                      const RooflineOptions& roofline);

}  // namespace kernelpro::cli
