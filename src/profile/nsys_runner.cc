#include "profile/nsys_runner.h"

namespace kernelpro::profile {

std::vector<std::string> NsysArgv(const std::string& nsys_path, const std::string& output_base,
                                  const std::string& nvtx_range) {
  return {nsys_path,
          "profile",
          "--trace=cuda,nvtx",
          "--sample=none",
          "--cpuctxsw=none",
          "--capture-range=nvtx",
          "--nvtx-capture=" + nvtx_range,
          "--capture-range-end=stop",
          "--export=sqlite",
          "--force-overwrite=true",
          "--output=" + output_base};
}

std::map<std::string, std::string> NsysEnvironment() {
  return {{"NSYS_NVTX_PROFILER_REGISTER_ONLY", "0"}};
}

std::string NsysSqlitePath(const std::string& output_base) { return output_base + ".sqlite"; }

}  // namespace kernelpro::profile
