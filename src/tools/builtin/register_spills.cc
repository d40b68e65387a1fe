// register_spills: STL/LDL in the SASS prove that registers spill to local memory; the tool
// reports them only when ncu shows they hurt (paper appendix B, RegisterSpillDetector):
//   A  latency-bound: long-scoreboard stall > 15 % while compute and memory throughput are both
//      < 50 % (spill reloads add latency and neither roof is near)
//   B  memory-bound by spills: memory throughput > 60 % and local-memory sectors > 30 % of all
//      global + local sectors (spills eat the bandwidth the data needs)
//   C  occupancy-limited: the register file is the binding occupancy limit (its block limit is the
//      smallest of the four) and the scheduler is starved (issue active < 30 % or eligible warps
//      per cycle < 0.6)
// Severity by case: B critical, A and C high.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

namespace st = system_tools;
using st::Observe;
using st::ObserveValue;

constexpr const char* kLimitRegisters = "launch__occupancy_limit_registers";
constexpr const char* kLimitShared = "launch__occupancy_limit_shared_mem";
constexpr const char* kLimitWarps = "launch__occupancy_limit_warps";
constexpr const char* kLimitBlocks = "launch__occupancy_limit_blocks";
constexpr const char* kIssueActive = "smsp__issue_active.avg.pct_of_peak_sustained_active";
constexpr const char* kEligible = "smsp__warps_eligible.avg.per_cycle_active";

class RegisterSpillsTool : public ProfilingTool {
 public:
  std::string name() const override { return "register_spills"; }
  ToolSource source() const override { return ToolSource::kSass; }
  std::string description() const override {
    return "register spills (STL/LDL) that measurably hurt: latency, bandwidth or occupancy";
  }
  std::vector<std::string> required_metrics() const override {
    return {"sass.local_store",  "sass.local_load",    st::kLongScoreboard,
            st::kSmThroughput,   st::kMemThroughput,   st::kLocalLdSectors,
            st::kLocalStSectors, st::kGlobalLdSectors, st::kGlobalStSectors,
            kLimitRegisters,     kLimitShared,         kLimitWarps,
            kLimitBlocks,        kIssueActive,         kEligible};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"long_scoreboard", 15, "%", "case A: long-scoreboard stall above this"},
            {"compute_low", 50, "%", "case A: compute throughput below this"},
            {"memory_low", 50, "%", "case A: memory throughput below this"},
            {"memory_high", 60, "%", "case B: memory throughput above this"},
            {"local_traffic", 30, "%",
             "case B: local sectors above this share of global + local sectors"},
            {"issue_active", 30, "%", "case C: scheduler issue activity below this"},
            {"eligible_warps", 0.6, "warps/cycle",
             "case C: eligible warps per scheduler cycle below this"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 70; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double stl = m.Get("sass.local_store"), ldl = m.Get("sass.local_load");
    if (stl + ldl <= 0) return out;
    const double lsb = m.Get(st::kLongScoreboard), compute = m.Get(st::kSmThroughput);
    const double memory = m.Get(st::kMemThroughput);
    const double local = m.Get(st::kLocalLdSectors) + m.Get(st::kLocalStSectors);
    const double global = m.Get(st::kGlobalLdSectors) + m.Get(st::kGlobalStSectors);
    const double local_ratio = local + global > 0 ? local / (local + global) : 0;
    const double limit_regs = m.Get(kLimitRegisters);
    const double other_limit =
        std::min({m.Get(kLimitShared), m.Get(kLimitWarps), m.Get(kLimitBlocks)});
    const double issue = m.Get(kIssueActive), eligible = m.Get(kEligible);

    const bool a = lsb > Threshold(c, "long_scoreboard") && compute < Threshold(c, "compute_low") &&
                   memory < Threshold(c, "memory_low");
    const bool b =
        memory > Threshold(c, "memory_high") && local_ratio * 100 > Threshold(c, "local_traffic");
    const bool registers_bind = limit_regs <= other_limit;
    const bool cc = registers_bind && (issue < Threshold(c, "issue_active") ||
                                       eligible < Threshold(c, "eligible_warps"));
    if (!a && !b && !cc) return out;

    out.triggered = true;
    out.severity = b ? Severity::kCritical : Severity::kHigh;
    std::string cases;
    auto add_case = [&](bool on, const std::string& text) {
      if (on) cases += (cases.empty() ? "" : "; ") + text;
    };
    add_case(a, "case A (latency-bound: long-scoreboard stall " + FormatQuantity(lsb, "%") +
                    ", compute " + FormatQuantity(compute, "%") + ", memory " +
                    FormatQuantity(memory, "%") + ")");
    add_case(b, "case B (spill traffic: local memory is " + st::Percent(local_ratio) +
                    " of sectors at memory throughput " + FormatQuantity(memory, "%") + ")");
    add_case(cc, "case C (occupancy: registers allow " + FormatNumber(limit_regs) +
                     " block(s) per SM, the tightest limit; issue active " +
                     FormatQuantity(issue, "%") + ", eligible warps " + FormatNumber(eligible) +
                     " per cycle)");
    const std::string first = b ? "B" : a ? "A" : "C";
    const double registers = m.Has("launch__registers_per_thread")
                                 ? m.Get("launch__registers_per_thread")
                                 : m.Get("sass.registers_max");
    out.title = "Register spills hurt this kernel (case " + first + ")";
    out.summary =
        "The SASS has " + FormatNumber(stl) + " STL and " + FormatNumber(ldl) +
        " LDL instructions" +
        (registers > 0 ? " at " + FormatNumber(registers) + " registers per thread" : "") +
        ", and the counters show the harm: " + cases + ".";
    Observe(out, m, "sass.local_store", "instructions");
    Observe(out, m, "sass.local_load", "instructions");
    Observe(out, m, "launch__registers_per_thread", "registers");
    Observe(out, m, st::kLongScoreboard, "%");
    Observe(out, m, st::kSmThroughput, "%");
    Observe(out, m, st::kMemThroughput, "%");
    ObserveValue(out, "local-memory traffic ratio", local_ratio * 100, "%");
    Observe(out, m, kLimitRegisters, "blocks");
    Observe(out, m, kIssueActive, "%");
    Observe(out, m, kEligible, "warps/cycle");
    out.root_cause =
        std::string(
            "More values are live at once than the registers per thread hold, so the "
            "compiler parks some in local memory (off-chip, cached in L1). ") +
        (b ? "The spill traffic competes with the kernel's own data for memory bandwidth. " : "") +
        (a ? "Every reload is a global-latency round trip on the critical path. " : "") +
        (cc ? "The register budget also caps how many warps are resident, leaving the scheduler "
              "with too few ready warps to hide latency. "
            : "");
    if (!out.root_cause.empty() && out.root_cause.back() == ' ') out.root_cause.pop_back();
    out.recommendations = {
        {"Cut live values: shrink per-thread tiles or unroll factors, recompute cheap values "
         "instead of "
         "keeping them, and avoid dynamically indexed per-thread arrays (they live in local "
         "memory)",
         b ? "1.5-2x when spill traffic takes a third of the bandwidth"
           : "1.2-1.5x on spill-bound kernels"},
        {"Set __launch_bounds__(threads, minBlocks) so the compiler budgets registers for the "
         "occupancy you "
         "need, or -maxrregcount, and check that STL/LDL disappear rather than grow",
         cc ? "more resident warps to hide latency"
            : "fewer spills when the budget was the problem"},
        {"Split a kernel that does two phases with different live sets into two kernels or two "
         "loops",
         "removes spills caused by the larger phase"}};
    out.code_example =
        "__global__ void __launch_bounds__(256, 2) kernel(...) {\n"
        "  float acc[4];            // was acc[16]: smaller per-thread tile, fewer live registers\n"
        "  #pragma unroll 2         // was a full unroll\n"
        "  for (int k = 0; k < K; k += 8) { ... }\n"
        "}\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeRegisterSpillsTool() {
  return std::make_unique<RegisterSpillsTool>();
}

}  // namespace kernelpro::tools
