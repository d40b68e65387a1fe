// branch_divergence: warps executing with few active threads.
// smsp__thread_inst_executed_per_inst_executed is the average number of active threads per executed
// warp instruction: 32 means no divergence.
#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

class BranchDivergenceTool : public ProfilingTool {
 public:
  std::string name() const override { return "branch_divergence"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Warps execute with few active threads (branch divergence or partial warps)";
  }
  std::vector<std::string> required_metrics() const override {
    return {std::string(profile::kNcuThreadsPerInstruction)};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"low", 24, "threads", "active threads per instruction below this triggers (medium)"},
            {"very_low", 16, "threads", "below this: high (half the SIMT lanes wasted)"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kCompute, roofline::Bottleneck::kLatency,
            roofline::Bottleneck::kMixed};
  }
  int priority() const override { return 60; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double active = m.Get(profile::kNcuThreadsPerInstruction);
    out.observed.push_back({std::string(profile::kNcuThreadsPerInstruction), active, "threads"});
    const double low = Threshold(c, "low");
    if (active >= low) return out;
    out.triggered = true;
    out.severity = active < Threshold(c, "very_low") ? Severity::kHigh : Severity::kMedium;
    const double efficiency = 100 * active / 32;
    out.title = "Warps run with " + FormatNumber(active) + " of 32 threads active";
    out.summary = "On average " + FormatNumber(active) +
                  " threads are active per executed instruction (trigger below " +
                  FormatNumber(low) + "): " + ncu_tools::Pct(efficiency) + " SIMT efficiency.";
    if (auto div = m.Find("smsp__sass_branch_targets_threads_divergent.sum")) {
      out.observed.push_back(
          {"smsp__sass_branch_targets_threads_divergent.sum", *div, "branch targets"});
      out.summary += " " + FormatNumber(*div) +
                     " branch targets were reached by a divergent subset of a warp.";
    }
    out.root_cause =
        "Threads of one warp take different paths of a data-dependent branch (each path runs with "
        "the "
        "others masked off), or blocks and loops leave warps partially filled (block size not a "
        "multiple "
        "of 32, per-thread loop trip counts that differ).";
    out.recommendations = {
        {"Make branch conditions uniform per warp: reorganise work so a warp's 32 threads take the "
         "same "
         "path (sort or bin items by branch, assign work per warp instead of per thread)",
         "up to " + FormatNumber(32 / std::max(active, 1.0), 2) + "x on the divergent part"},
        {"Replace short branches with predicated arithmetic (select, fminf/fmaxf, masks)",
         "1.1-1.5x"},
        {"Use block sizes that are multiples of 32 and balance per-thread loop trip counts",
         "1.05-1.2x"},
    };
    out.code_example =
        "// divergent: if (x[i] > 0) y[i] = a * x[i]; else y[i] = b * x[i];\n"
        "float s = x[i] > 0.f ? a : b;  // compiled to a select, no branch\n"
        "y[i] = s * x[i];";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeBranchDivergenceTool() {
  return std::make_unique<BranchDivergenceTool>();
}

}  // namespace kernelpro::tools
