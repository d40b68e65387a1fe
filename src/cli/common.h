// Pieces shared by the subcommands: default directories and the executor they all start from.
#pragma once

#include <string>

#include "eval/executor.h"

namespace kernelpro::cli {

// $XDG_CACHE_HOME/kernelpro, else ~/.cache/kernelpro: builds and references shared by runs.
std::string DefaultCacheDir();

// Fills empty cache/work directories with their defaults and starts a worker client. On failure
// prints the reason to stderr and returns nullopt (the caller exits with 2).
std::optional<Executor> MakeExecutor(EvalOptions& options, const std::string& python,
                                     const char* command_name);

}  // namespace kernelpro::cli
