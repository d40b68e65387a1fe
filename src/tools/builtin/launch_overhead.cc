// launch_overhead: the forward call spends a large share of its wall time with the GPU idle while
// the host launches kernels (paper appendix B, LaunchOverheadDetector; DESIGN.md §6: high 20 %,
// critical 40 %). p = 1 - busy / end-to-end; removing that overhead gives at most 1 / (1 - p).
//
// One launch always costs one launch latency before the GPU starts, and nothing the candidate
// writes removes it (there is nothing to fuse or capture), so the tool needs at least
// `min_kernels` launches.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

using system_tools::Observe;
using system_tools::ObserveValue;
using system_tools::Percent;
using system_tools::Times;

class LaunchOverheadTool : public ProfilingTool {
 public:
  std::string name() const override { return "launch_overhead"; }
  ToolSource source() const override { return ToolSource::kTimeline; }
  std::string description() const override {
    return "GPU idle while the host launches kernels: a large share of the forward call is launch "
           "overhead";
  }
  std::vector<std::string> required_metrics() const override {
    return {"timeline.launch_overhead_share", "timeline.kernel_count",
            "timeline.avg_launch_latency_us", "timeline.end_to_end_us", "timeline.gpu_busy_us"};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"high", 20, "%", "launch overhead above this share of end-to-end time is a high finding"},
        {"critical", 40, "%", "launch overhead above this share is critical"},
        {"min_kernels", 2, "kernels",
         "fewer launches than this leave only the unavoidable latency of the first launch"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 60; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double p = std::clamp(m.Get("timeline.launch_overhead_share"), 0.0, 1.0);
    const double kernels = m.Get("timeline.kernel_count");
    const double e2e = m.Get("timeline.end_to_end_us");
    const double busy = m.Get("timeline.gpu_busy_us");
    const double latency = m.Get("timeline.avg_launch_latency_us");
    const double high = Threshold(c, "high"), critical = Threshold(c, "critical");
    if (kernels < Threshold(c, "min_kernels") || p * 100.0 <= high) return out;

    out.triggered = true;
    out.severity = p * 100.0 > critical ? Severity::kCritical : Severity::kHigh;
    const double speedup = p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
    const std::string bound = p < 1.0 ? Times(speedup) : "unbounded";
    out.title = "Launch overhead takes " + Percent(p) + " of the forward call";
    out.summary = "The GPU is busy for " + FormatQuantity(busy, "us") + " of a " +
                  FormatQuantity(e2e, "us") + " forward call that launches " +
                  FormatNumber(kernels) + " kernels (" + FormatQuantity(latency, "us") +
                  " from launch call to kernel start on average); removing the "
                  "overhead would give at most " +
                  bound + ".";
    Observe(out, m, "timeline.launch_overhead_share");
    ObserveValue(out, "launch overhead", p * 100.0, "%");
    Observe(out, m, "timeline.kernel_count", "kernels");
    Observe(out, m, "timeline.end_to_end_us", "us");
    Observe(out, m, "timeline.gpu_busy_us", "us");
    Observe(out, m, "timeline.avg_launch_latency_us", "us");
    out.root_cause =
        "Each launch costs host time (argument setup, the driver call, queueing) before the GPU "
        "can "
        "start; with short kernels the GPU waits on the host between launches, so the wall time "
        "follows the launch rate rather than the work.";
    out.recommendations = {
        {"Capture the forward call in a CUDA Graph (torch.cuda.CUDAGraph or "
         "cudaStreamBeginCapture) and replay "
         "it, so all launches are submitted as one",
         "up to " + bound + " (1/(1-p))"},
        {"Fuse consecutive kernels into one, keeping intermediates in registers or shared memory",
         "up to " + bound + ", plus fewer passes over memory"},
        {"Use one persistent kernel whose blocks loop over the work instead of many short launches",
         "up to " + bound + " when the launches cannot be fused statically"}};
    out.code_example =
        "cudaGraph_t graph; cudaGraphExec_t exec;\n"
        "cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);\n"
        "launch_all_kernels(stream);             // the forward's launches, unchanged\n"
        "cudaStreamEndCapture(stream, &graph);\n"
        "cudaGraphInstantiate(&exec, graph, 0);\n"
        "cudaGraphLaunch(exec, stream);          // one submission per forward call\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeLaunchOverheadTool() {
  return std::make_unique<LaunchOverheadTool>();
}

}  // namespace kernelpro::tools
