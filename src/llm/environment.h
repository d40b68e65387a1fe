// Reading environment variables through a seam: API keys, AWS credentials and regions come from
// the environment, and tests must never depend on the real one. A lookup is a plain function;
// ProcessEnvironment() reads std::getenv (safe while nothing in the process calls setenv).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace kernelpro::llm {

// Reads one environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment.
EnvLookup ProcessEnvironment();

}  // namespace kernelpro::llm
