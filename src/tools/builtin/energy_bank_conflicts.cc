// energy_bank_conflicts (energy-only): shared-memory bank conflicts that cost no time. Each
// conflict replays the access as an extra wavefront through the shared-memory pipeline, which
// draws energy whether or not a warp waits for it; when the MIO / short-scoreboard stalls are low
// the replays are latency-hidden, so no speed tool reports them.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

namespace st = system_tools;
using st::Observe;
using st::ObserveValue;

constexpr const char* kConflictsLd = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
constexpr const char* kConflictsSt = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
constexpr const char* kWavefrontsLd = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
constexpr const char* kWavefrontsSt = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";

class EnergyBankConflictsTool : public ProfilingTool {
 public:
  std::string name() const override { return "energy_bank_conflicts"; }
  ToolSource source() const override { return ToolSource::kEnergy; }
  std::string description() const override {
    return "latency-hidden shared-memory bank conflicts: extra wavefronts that cost energy, not "
           "time";
  }
  std::vector<std::string> required_metrics() const override {
    return {kConflictsLd,  kConflictsSt,         kWavefrontsLd,
            kWavefrontsSt, st::kShortScoreboard, st::kMioThrottle};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"conflict_share", 10, "%", "bank conflicts above this share of shared-memory wavefronts"},
        {"stall_low", 10, "%",
         "short-scoreboard and MIO-throttle stalls below this: the conflicts are hidden"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 20; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double conflicts = m.Get(kConflictsLd) + m.Get(kConflictsSt);
    const double wavefronts = m.Get(kWavefrontsLd) + m.Get(kWavefrontsSt);
    if (conflicts <= 0 || wavefronts <= 0) return out;
    const double share = std::min(1.0, conflicts / wavefronts);
    const double sb = m.Get(st::kShortScoreboard), mio = m.Get(st::kMioThrottle);
    const double low = Threshold(c, "stall_low");
    if (share * 100 <= Threshold(c, "conflict_share") || sb >= low || mio >= low) return out;

    out.triggered = true;
    out.severity = Severity::kLow;
    out.title =
        "Hidden shared-memory bank conflicts: " + st::Percent(share) + " of wavefronts are replays";
    out.summary = FormatNumber(conflicts) + " bank conflicts over " + FormatNumber(wavefronts) +
                  " shared-memory wavefronts, while short-scoreboard (" + FormatQuantity(sb, "%") +
                  ") and MIO-throttle (" + FormatQuantity(mio, "%") +
                  ") stalls stay low: the replays cost "
                  "energy but no time.";
    Observe(out, m, kConflictsLd);
    Observe(out, m, kConflictsSt);
    ObserveValue(out, "conflict share of wavefronts", share * 100, "%");
    Observe(out, m, st::kShortScoreboard, "%");
    Observe(out, m, st::kMioThrottle, "%");
    out.root_cause =
        "Threads of a warp hit different addresses in the same shared-memory bank, so the access "
        "is split into several wavefronts; other warps cover the delay, but every extra "
        "wavefront is another pass through the shared-memory datapath.";
    out.recommendations = {
        {"Pad shared arrays by one element per row (tile[32][33]) or XOR-swizzle the column index "
         "so a "
         "warp's accesses fall in distinct banks",
         "removes up to " + st::Percent(share) +
             " of shared-memory wavefronts; same speed, less energy"}};
    out.code_example =
        "__shared__ float tile[32][32 + 1];  // +1 column: column reads hit 32 distinct banks\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeEnergyBankConflictsTool() {
  return std::make_unique<EnergyBankConflictsTool>();
}

}  // namespace kernelpro::tools
