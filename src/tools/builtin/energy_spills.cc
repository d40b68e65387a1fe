// energy_spills (energy-only): local-memory traffic (register spills or dynamically indexed
// per-thread arrays) that costs no time because long-scoreboard and LSU-throttle stalls are low.
// Each local sector still travels through L1 (and L2 on a miss): about 80 pJ per sector in the
// energy proxy (DESIGN.md §6), spent for data the registers could have held.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

namespace st = system_tools;
using st::Observe;
using st::ObserveValue;

constexpr double kPicojoulesPerLocalSector = 80;  // DESIGN.md §6, energy proxy term B3

class EnergySpillsTool : public ProfilingTool {
 public:
  std::string name() const override { return "energy_spills"; }
  ToolSource source() const override { return ToolSource::kEnergy; }
  std::string description() const override {
    return "latency-hidden local-memory (spill) traffic: costs energy, not time";
  }
  std::vector<std::string> required_metrics() const override {
    return {st::kLocalLdSectors, st::kLocalStSectors, st::kLongScoreboard, st::kLgThrottle};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"min_sectors", 1, "sectors",
         "local-memory sectors (loads + stores) from which the tool fires"},
        {"long_scoreboard_low", 15, "%",
         "long-scoreboard stall below this: the reloads are hidden"},
        {"lg_throttle_low", 10, "%", "LSU (lg) throttle stall below this: the queue is not full"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 25; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double ld = m.Get(st::kLocalLdSectors), stores = m.Get(st::kLocalStSectors);
    const double local = ld + stores;
    const double lsb = m.Get(st::kLongScoreboard), lg = m.Get(st::kLgThrottle);
    if (local < Threshold(c, "min_sectors") || lsb >= Threshold(c, "long_scoreboard_low") ||
        lg >= Threshold(c, "lg_throttle_low")) {
      return out;
    }
    const double stl = m.Get("sass.local_store"), ldl = m.Get("sass.local_load");
    const bool have_sass = m.Has("sass.local_store") && m.Has("sass.local_load");
    const double microjoules = local * kPicojoulesPerLocalSector * 1e-6;

    out.triggered = true;
    out.severity = Severity::kLow;
    out.title = "Hidden local-memory traffic: " + FormatNumber(local) + " spill sectors";
    out.summary =
        "The kernel moves " + FormatNumber(ld) + " local-memory load and " + FormatNumber(stores) +
        " store sectors" +
        (have_sass ? " (" + FormatNumber(stl) + " STL, " + FormatNumber(ldl) + " LDL in the SASS)"
                   : "") +
        " while long-scoreboard (" + FormatQuantity(lsb, "%") + ") and lg-throttle (" +
        FormatQuantity(lg, "%") + ") stalls stay low: about " + st::Energy(microjoules) +
        " per launch by the energy proxy, with no time cost.";
    Observe(out, m, st::kLocalLdSectors, "sectors");
    Observe(out, m, st::kLocalStSectors, "sectors");
    if (have_sass) {
      Observe(out, m, "sass.local_store", "instructions");
      Observe(out, m, "sass.local_load", "instructions");
    }
    Observe(out, m, st::kLongScoreboard, "%");
    Observe(out, m, st::kLgThrottle, "%");
    ObserveValue(out, "estimated local-memory energy", microjoules, "uJ");
    out.root_cause =
        "Values that do not fit the register budget (or per-thread arrays indexed at run time) "
        "are kept in local memory; the round trips are overlapped with other work, so timing does "
        "not show them, but every sector is moved through the cache hierarchy.";
    out.recommendations = {
        {"Keep the values in registers: index per-thread arrays with compile-time constants (full "
         "unroll), "
         "shrink per-thread tiles, or relax __launch_bounds__ if it forced the spills",
         "removes about " + st::Energy(microjoules) + " per launch at the same speed"}};
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeEnergySpillsTool() {
  return std::make_unique<EnergySpillsTool>();
}

}  // namespace kernelpro::tools
