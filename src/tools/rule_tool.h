// Declarative micro-profiling tools from TOML rule files: users add a heuristic without
// rebuilding kernelpro (`--tool-rules FILE`). A file holds one or more [[tool]] tables:
//
//   [[tool]]
//   name = "l2_thrashing"                 # unique; snake_case
//   source = "ncu"                        # ncu | timeline | sass | energy
//   description = "Heavy DRAM re-reads with a low L2 hit rate"
//   bottlenecks = ["memory", "mixed"]     # Stage-1 classes it runs for (default: all)
//   priority = 40                         # orders findings of equal severity (default 50)
//   required = ["dram__bytes_read.sum"]   # optional; default: every metric the expressions read
//   trigger = "lts__t_sector_hit_rate.pct < low_hit && read_mb > min_mb"
//   title = "L2 hit rate {lts__t_sector_hit_rate.pct} % with {read_mb} MB read from DRAM"
//   summary = "..."                       # templates: {name} is a metric, let or threshold,
//   root_cause = "..."                    #   printed like every other tool's numbers
//   observed = ["lts__t_sector_hit_rate.pct", "read_mb"]
//   code_example = """..."""              # optional
//   [tool.thresholds]                     # name = value, or {value, unit, description}
//   low_hit = { value = 50, unit = "%", description = "L2 hit rate below this" }
//   min_mb = 64
//   [tool.let]                            # derived values, in order; may use earlier ones
//   read_mb = "dram__bytes_read.sum / 1e6"
//   [[tool.severity]]                     # first rule whose `when` holds; one without `when`
//   when = "lts__t_sector_hit_rate.pct < 20"  # is the default (else: medium)
//   level = "high"
//   [[tool.recommendation]]               # ranked in file order
//   action = "Tile the loop so each block reuses what it loaded"
//   expected = "up to {read_mb} MB less DRAM traffic"
//
// Expressions are those of expression.h; thresholds override like any tool's (tool -> name).
// Every file is checked when it is loaded: a syntax error, an unknown key, a bad source or
// severity, or a template naming something undefined is reported with the file and tool name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "tools/tool.h"

namespace kernelpro::tools {

// Parses the rule text (`origin` names it in errors, e.g. the file path).
Result<std::vector<std::unique_ptr<ProfilingTool>>> ParseRuleTools(std::string_view toml_text,
                                                                   const std::string& origin);

// Reads and parses a rule file.
Result<std::vector<std::unique_ptr<ProfilingTool>>> LoadRuleFile(const std::string& path);

}  // namespace kernelpro::tools
