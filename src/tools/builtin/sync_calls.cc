// sync_calls: the forward call blocks the host on the GPU. The worker itself synchronises once
// per profiled call (python/kernelpro_worker/profile_step.py, _profiled_calls), so only syncs
// beyond `harness_syncs` belong to the candidate: .item(), .cpu(), torch.cuda.synchronize(),
// cudaDeviceSynchronize() or a blocking copy inside the forward.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

using system_tools::Observe;
using system_tools::ObserveValue;

class SyncCallsTool : public ProfilingTool {
 public:
  std::string name() const override { return "sync_calls"; }
  ToolSource source() const override { return ToolSource::kTimeline; }
  std::string description() const override {
    return "host synchronisation inside the forward call stalls the launch queue";
  }
  std::vector<std::string> required_metrics() const override {
    return {"timeline.sync_calls", "timeline.sync_time_us", "timeline.end_to_end_us"};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"harness_syncs", 1, "calls", "syncs the profiling worker itself makes per forward call"},
        {"high_extra_syncs", 3, "calls",
         "this many syncs of the candidate's own or more is a high finding"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 50; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double syncs = m.Get("timeline.sync_calls");
    const double extra = syncs - Threshold(c, "harness_syncs");
    if (extra < 1) return out;
    const double time = m.Get("timeline.sync_time_us");
    const double e2e = m.Get("timeline.end_to_end_us");

    out.triggered = true;
    out.severity = extra >= Threshold(c, "high_extra_syncs") ? Severity::kHigh : Severity::kMedium;
    out.title = FormatNumber(extra) + " host synchronisation(s) inside the forward call";
    out.summary =
        "The forward call synchronises with the GPU " + FormatNumber(syncs) + " times (" +
        FormatNumber(extra) + " beyond the profiling worker's own), blocking the host for " +
        FormatQuantity(time, "us") + " of a " + FormatQuantity(e2e, "us") + " call in total.";
    Observe(out, m, "timeline.sync_calls", "calls");
    ObserveValue(out, "syncs beyond the harness", extra, "calls");
    Observe(out, m, "timeline.sync_time_us", "us");
    Observe(out, m, "timeline.end_to_end_us", "us");
    out.root_cause =
        "A synchronisation makes the host wait until the GPU drains its queue, so nothing is "
        "queued behind the running kernel: the next launch starts only after the host wakes up, "
        "and the launch latency is paid again in full after every sync.";
    out.recommendations = {{"Remove .item(), .cpu(), .tolist(), torch.cuda.synchronize() and "
                            "cudaDeviceSynchronize() from the "
                            "forward; keep scalars as device tensors and decide on the GPU "
                            "(torch.where, masks) instead of in "
                            "Python",
                            "removes a launch latency (several us) per sync, more when the host "
                            "then launches many kernels"},
                           {"If a value must reach the host, copy it with non_blocking=True into "
                            "pinned memory and read it after "
                            "the forward's launches are queued",
                            "keeps the GPU queue full while the copy completes"}};
    out.code_example =
        "// before: if (norm.item<float>() > 1.f) x = x / norm;   (blocks the host)\n"
        "// after:  stays on the device, no sync\n"
        "x = torch::where(norm > 1, x / norm, x);\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeSyncCallsTool() { return std::make_unique<SyncCallsTool>(); }

}  // namespace kernelpro::tools
