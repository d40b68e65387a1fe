// The built-in micro-profiling tools, listed explicitly in one place. Each tool lives in its own
// file beside its test; the order here is the order tools run and, at equal severity and
// priority, the order their findings appear.
#include "tools/registry.h"

namespace kernelpro {

std::vector<std::unique_ptr<ProfilingTool>> BuiltinTools() {
  std::vector<std::unique_ptr<ProfilingTool>> tools;
  return tools;
}

}  // namespace kernelpro
