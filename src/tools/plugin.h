// Loads micro-profiling tools from plugin shared libraries (the C ABI of kernelpro_tool_plugin.h).
// The library stays loaded for the life of the process; each tool wraps one kp_tool entry and
// converts its C output into a ToolOutput. A library that cannot be opened, lacks the entry point,
// refuses the ABI version or describes a tool badly gives a clear error and adds no tools.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "tools/tool.h"

namespace kernelpro::tools {

Result<std::vector<std::unique_ptr<ProfilingTool>>> LoadToolPlugin(const std::string& path);

}  // namespace kernelpro::tools
