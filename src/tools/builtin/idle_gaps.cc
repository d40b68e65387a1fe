// idle_gaps: the GPU sits idle between launches for longer than the timeline's gap threshold
// (max(1 % of end-to-end, 5 us), DESIGN.md §6): host-side work (Python, allocation, tensor
// bookkeeping) between kernels that the GPU waits for.
//
// The gap before the first kernel is the first launch's own latency, not host work between
// launches: when the full record is at hand its gap at time 0 is left out; with the metric set
// alone all gaps count, and a single launch never fires.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

using system_tools::Observe;
using system_tools::ObserveValue;
using system_tools::Percent;
using system_tools::Times;

class IdleGapsTool : public ProfilingTool {
 public:
  std::string name() const override { return "idle_gaps"; }
  ToolSource source() const override { return ToolSource::kTimeline; }
  std::string description() const override {
    return "GPU idle gaps between launches: host-side work the GPU waits for";
  }
  std::vector<std::string> required_metrics() const override {
    return {"timeline.gap_count", "timeline.gap_time_us", "timeline.largest_gap_us",
            "timeline.end_to_end_us", "timeline.kernel_count"};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"medium_share", 10, "%",
         "idle time between launches above this share of end-to-end time fires"},
        {"high_share", 30, "%", "idle time above this share is a high finding"},
        {"min_kernels", 2, "kernels", "gaps between launches need at least this many launches"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 45; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    if (m.Get("timeline.kernel_count") < Threshold(c, "min_kernels")) return out;
    double count = m.Get("timeline.gap_count");
    double time = m.Get("timeline.gap_time_us");
    double largest = m.Get("timeline.largest_gap_us");
    bool leading_excluded = false;
    if (c.metrics != nullptr && c.metrics->timeline) {
      count = 0, time = 0, largest = 0;
      for (const profile::IdleGap& gap : c.metrics->timeline->gaps) {
        if (gap.start_us <= 0) {
          leading_excluded = true;
          continue;
        }
        ++count;
        time += gap.duration_us;
        largest = std::max(largest, gap.duration_us);
      }
    }
    const double e2e = m.Get("timeline.end_to_end_us");
    const double share = e2e > 0 ? time / e2e : 0;
    if (count < 1 || share * 100 <= Threshold(c, "medium_share")) return out;

    out.triggered = true;
    out.severity = share * 100 > Threshold(c, "high_share") ? Severity::kHigh : Severity::kMedium;
    const double bound = share < 1 ? 1 / (1 - share) : 1;
    out.title = "GPU idle " + Percent(share) + " of the forward call between launches";
    out.summary = FormatNumber(count) + " idle gap(s) between GPU activities add up to " +
                  FormatQuantity(time, "us") + " of a " + FormatQuantity(e2e, "us") +
                  " call (largest " + FormatQuantity(largest, "us") +
                  (leading_excluded ? ", the first launch's latency left out" : "") +
                  "); closing them would give up to " + Times(bound) + ".";
    ObserveValue(out, "idle gaps between launches", count, "gaps");
    ObserveValue(out, "idle time between launches", time, "us");
    ObserveValue(out, "largest gap", largest, "us");
    ObserveValue(out, "idle share", share * 100, "%");
    Observe(out, m, "timeline.end_to_end_us", "us");
    Observe(out, m, "timeline.gap_threshold_us", "us");
    out.root_cause =
        "Between kernels the host runs code the GPU has to wait for: Python logic, tensor "
        "allocation or reshaping, shape checks, or a launch that depends on a value computed on "
        "the host. The GPU queue runs dry and stays idle until the next launch arrives.";
    out.recommendations = {{"Move the host-side work out of the forward (precompute shapes, "
                            "allocate outputs once, hoist "
                            "constant tensors) so launches follow each other back to back",
                            "up to " + Times(bound)},
                           {"Capture the forward in a CUDA Graph so the whole sequence is "
                            "submitted at once, or overlap "
                            "independent work on a second stream",
                            "up to " + Times(bound) + " when the gaps are launch-side only"}};
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeIdleGapsTool() { return std::make_unique<IdleGapsTool>(); }

}  // namespace kernelpro::tools
