// For tests: the CUTLASS tree's include folder (the one holding cute/ and cutlass/), from
// KERNELPRO_CUTLASS_DIR or what scripts/setup installed under .tools/; "" when there is none (the
// test then skips, saying how to get one); and a constraint found by its text.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cutlass/constraints.h"

namespace kernelpro::cutlass::testing {

inline std::string TestIncludeDir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("KERNELPRO_CUTLASS_DIR"); env != nullptr && *env != '\0') {
    candidates.push_back(env);
    candidates.push_back(fs::path(env) / "include");
    candidates.push_back(fs::path(env) / "cutlass_library/source/include");
  }
  const fs::path tools = fs::path(KERNELPRO_SOURCE_DIR) / ".tools";
  for (const char* sub : {"pypi", "cutlass", "cutlass-pypi"}) {
    candidates.push_back(tools / sub / "cutlass_library/source/include");
  }
  for (const fs::path& dir : candidates) {
    if (fs::exists(dir / "cute/tensor.hpp")) return dir.string();
  }
  return "";
}

// The constraint whose text holds `message`, or null.
inline const Constraint* FindConstraint(const std::vector<Constraint>& constraints,
                                        const std::string& message) {
  for (const Constraint& c : constraints) {
    if (c.text.find(message) != std::string::npos) return &c;
  }
  return nullptr;
}

}  // namespace kernelpro::cutlass::testing
