#include "core/tool_paths.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

namespace kernelpro {
namespace {

bool IsExecutable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string FindTool(const std::string& name) {
  std::string env_name = "KERNELPRO_" + name;
  std::transform(env_name.begin(), env_name.end(), env_name.begin(),
                 [](unsigned char c) { return std::isalnum(c) ? std::toupper(c) : '_'; });
  if (const char* forced = std::getenv(env_name.c_str()); forced && *forced) {
    return IsExecutable(forced) ? forced : "";
  }
  std::vector<std::filesystem::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) {
      if (!dir.empty()) dirs.emplace_back(dir);
    }
  }
  if (const char* cuda = std::getenv("CUDA_HOME"); cuda && *cuda)
    dirs.emplace_back(std::string(cuda) + "/bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const auto& dir : dirs) {
    if (IsExecutable(dir / name)) return (dir / name).string();
  }
  std::error_code ec;
  std::filesystem::path pypi = std::filesystem::path(KERNELPRO_SOURCE_ROOT) / ".tools/pypi/nvidia";
  for (const auto& entry : std::filesystem::directory_iterator(pypi, ec)) {
    if (IsExecutable(entry.path() / "bin" / name)) return (entry.path() / "bin" / name).string();
  }
  return "";
}

}  // namespace kernelpro
