#include "llm/environment.h"

#include <cstdlib>

namespace kernelpro::llm {

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read only
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace kernelpro::llm
