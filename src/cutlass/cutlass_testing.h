// For tests: the CUTLASS tree's include folder (the one holding cute/ and cutlass/), from
// KERNELPRO_CUTLASS_DIR or what scripts/setup installed under .tools/; "" when there is none (the
// test then skips, saying how to get one).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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

}  // namespace kernelpro::cutlass::testing
