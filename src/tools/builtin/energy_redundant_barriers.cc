// energy_redundant_barriers (energy-only): many CTA barriers (BAR in the SASS) while warps rarely
// wait at them. A barrier that never makes anyone wait still costs an issue slot per warp and the
// barrier unit's bookkeeping on every pass; when the barrier stall is low, timing does not show it.
// Counts are static (a barrier in a loop counts once), so the tool asks for several per kernel.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

namespace st = system_tools;
using st::Observe;
using st::ObserveValue;

class EnergyRedundantBarriersTool : public ProfilingTool {
 public:
  std::string name() const override { return "energy_redundant_barriers"; }
  ToolSource source() const override { return ToolSource::kEnergy; }
  std::string description() const override {
    return "many __syncthreads() that no warp waits at: issue slots and energy without a time cost";
  }
  std::vector<std::string> required_metrics() const override {
    return {"sass.barrier", "sass.instructions", "sass.kernels", st::kBarrierStall};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"min_barriers_per_kernel", 8, "barriers",
             "static CTA barriers per kernel from which the tool fires"},
            {"barrier_stall_low", 5, "%",
             "barrier stall below this: warps rarely wait at the barriers"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 18; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double barriers = m.Get("sass.barrier");
    const double kernels = std::max(1.0, m.Get("sass.kernels"));
    const double instructions = m.Get("sass.instructions");
    const double per_kernel = barriers / kernels;
    const double stall = m.Get(st::kBarrierStall);
    if (per_kernel < Threshold(c, "min_barriers_per_kernel") ||
        stall >= Threshold(c, "barrier_stall_low")) {
      return out;
    }
    const double per_1k = instructions > 0 ? barriers / instructions * 1000 : 0;

    out.triggered = true;
    out.severity = Severity::kLow;
    out.title = FormatNumber(per_kernel) + " barriers per kernel that warps rarely wait at";
    out.summary = "The SASS has " + FormatNumber(barriers) + " CTA barriers over " +
                  FormatNumber(kernels) + " kernel(s) (" + FormatNumber(per_1k) +
                  " per 1000 instructions) while the barrier stall is " +
                  FormatQuantity(stall, "%") +
                  ": most of them synchronise warps that are already in step.";
    Observe(out, m, "sass.barrier", "instructions");
    Observe(out, m, "sass.kernels", "kernels");
    ObserveValue(out, "barriers per 1000 instructions", per_1k, "");
    Observe(out, m, st::kBarrierStall, "%");
    out.root_cause =
        "Barriers are placed more often than the data dependencies need (after every step, or "
        "around accesses that only one warp shares); they cost little time because warps arrive "
        "together, but each is executed by every warp on every pass.";
    out.recommendations = {
        {"Keep a __syncthreads() only between a shared-memory write and a read by another warp; "
         "drop those "
         "that separate independent phases, double-buffer shared tiles to need one barrier per "
         "iteration, "
         "and use __syncwarp() or shuffles when only one warp shares the data",
         "fewer issued instructions and barrier operations at the same speed"}};
    out.code_example =
        "// warp-level reduction: no block barrier needed inside a warp\n"
        "for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeEnergyRedundantBarriersTool() {
  return std::make_unique<EnergyRedundantBarriersTool>();
}

}  // namespace kernelpro::tools
