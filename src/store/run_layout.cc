#include "store/run_layout.h"

#include <cstdio>
#include <filesystem>

namespace kernelpro::store {

std::string RunLayout::CandidateFile(std::int64_t candidate_id) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "candidates/%04lld.py", static_cast<long long>(candidate_id));
  return buf;
}

std::string RunLayout::Path(const std::string& relative) const {
  return (std::filesystem::path(dir_) / relative).string();
}

}  // namespace kernelpro::store
