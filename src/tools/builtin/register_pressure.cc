// register_pressure: many registers per thread (paper appendix B, HighRegisterUsageTool: warning
// 96, critical 128; DESIGN.md §6). The finding says whether registers are what limits occupancy
// (launch__occupancy_limit_registers against the other limits) and stays quiet on kernels that
// already run a unit near peak (tuned library GEMMs use 168-255 registers on purpose).
#include <algorithm>
#include <cmath>

#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;

constexpr const char* kLimitRegs = "launch__occupancy_limit_registers";
constexpr const char* kGrid = "launch__grid_size";
constexpr const char* kSms = "device__attribute_multiprocessor_count";
constexpr const char* kLimitOthers[] = {"launch__occupancy_limit_shared_mem",
                                        "launch__occupancy_limit_warps",
                                        "launch__occupancy_limit_blocks"};

class RegisterPressureTool : public ProfilingTool {
 public:
  std::string name() const override { return "register_pressure"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Registers per thread high enough to cap occupancy or spill to local memory";
  }
  std::vector<std::string> required_metrics() const override {
    return {std::string(profile::kNcuRegistersPerThread)};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"warning", 96, "registers", "at or above: medium finding"},
            {"critical", 128, "registers", "at or above: high finding"},
            {"saturated", 80, "%",
             "SM throughput at or above this: registers are a deliberate trade (quiet)"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override { return ncu_tools::AllClasses(); }
  int priority() const override { return 70; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double regs = m.Get(profile::kNcuRegistersPerThread);
    out.observed.push_back({std::string(profile::kNcuRegistersPerThread), regs, "registers"});
    const double warning = Threshold(c, "warning");
    const double critical = Threshold(c, "critical");
    if (regs < warning) return out;
    if (auto sm = m.Find(profile::kNcuSmThroughputPct); sm && *sm >= Threshold(c, "saturated")) {
      out.observed.push_back({std::string(profile::kNcuSmThroughputPct), *sm, "%"});
      return out;  // already at a unit's peak: the register budget is buying throughput
    }
    out.triggered = true;
    out.severity = regs >= critical ? Severity::kHigh : Severity::kMedium;
    // Is the register file the binding occupancy limit?
    std::optional<bool> binding;
    std::string limit_text;
    if (auto lr = m.Find(kLimitRegs)) {
      out.observed.push_back({kLimitRegs, *lr, "blocks/SM"});
      double others = 1e30;
      for (const char* n : kLimitOthers) {
        if (auto v = m.Find(n)) others = std::min(others, *v);
      }
      binding = *lr <= others;
      limit_text = " The register file allows " + FormatNumber(*lr) + " block(s) per SM" +
                   (others < 1e30 ? std::string(*binding ? ", the tightest of the occupancy limits"
                                                         : ", but another limit is tighter (" +
                                                               FormatNumber(others) + " blocks)")
                                  : std::string()) +
                   ".";
      // A grid that gives each SM fewer blocks than the register file allows is not held back
      // by registers: the launch size binds (occupancy_limiter says so).
      auto grid = m.Find(kGrid);
      auto sms = m.Find(kSms);
      if (*binding && grid && sms && *sms > 0 && std::ceil(*grid / *sms) <= *lr) {
        binding = false;
        out.observed.push_back({kGrid, *grid, "blocks"});
        out.observed.push_back({kSms, *sms, "SMs"});
        limit_text = " The register file allows " + FormatNumber(*lr) +
                     " block(s) per SM, but the grid of " + FormatNumber(*grid) + " block(s) for " +
                     FormatNumber(*sms) +
                     " SMs never puts that many on one SM: registers do not limit occupancy now.";
      }
      if (!*binding) out.severity = Severity::kLow;
    }
    if (auto occ = m.Find(profile::kNcuAchievedOccupancyPct)) {
      out.observed.push_back({std::string(profile::kNcuAchievedOccupancyPct), *occ, "%"});
      limit_text += " Achieved occupancy is " + Pct(*occ) + ".";
    }
    const double local =
        m.Get(profile::kNcuLocalLoadSectors) + m.Get(profile::kNcuLocalStoreSectors);
    if (m.Has(profile::kNcuLocalLoadSectors) && local > 0) {
      out.observed.push_back({"local_memory_sectors", local, "sectors"});
      limit_text += " Local-memory traffic of " + FormatNumber(local) + " sectors suggests spills.";
    }
    out.title = FormatNumber(regs) + " registers per thread" +
                (binding.value_or(false) ? " limit occupancy" : " (high register pressure)");
    out.summary = "Each thread uses " + FormatQuantity(regs, "registers") + " (warning at " +
                  FormatNumber(warning) + ", critical at " + FormatNumber(critical) + ")." +
                  limit_text;
    out.root_cause =
        "The compiler keeps many values live at once (large unrolled loops, per-thread arrays, "
        "long "
        "accumulator tiles). Each SM has 64K registers, so more registers per thread means fewer "
        "resident warps to hide latency, and past the per-thread limit values spill to slow local "
        "memory.";
    // Fewer registers only pay off where they bind occupancy (or spill).
    const bool binds = binding.value_or(true);
    auto gain = [&](const char* when_binding) {
      return binds ? std::string(when_binding)
                   : std::string("small: registers do not bind occupancy");
    };
    out.recommendations = {
        {"Add __launch_bounds__(threads_per_block, min_blocks_per_sm) so the compiler targets the "
         "occupancy you need",
         gain("1.1-1.5x when latency-bound")},
        {"Cap registers with -maxrregcount (or per kernel with __launch_bounds__) and check the "
         "SASS for new LDL/STL spills",
         gain("1.1-1.3x; watch for spills")},
        {"Shorten live ranges: smaller per-thread tiles, less unrolling, recompute cheap values "
         "instead of keeping them, move per-thread arrays to shared memory",
         gain("1.1-1.5x")},
        {"Split the kernel into phases that each need fewer live values", "case by case"},
    };
    out.code_example =
        "__global__ void __launch_bounds__(256, 2)  // 256 threads, >= 2 blocks per SM: <= 128 "
        "regs\n"
        "my_kernel(const float* __restrict__ in, float* __restrict__ out) { ... }";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeRegisterPressureTool() {
  return std::make_unique<RegisterPressureTool>();
}

}  // namespace kernelpro::tools
