// memcpy_hot_path: host<->device copies inside the forward call. Every call then moves data over
// PCIe/NVLink-C2C at a fraction of device bandwidth, and a pageable copy also blocks the host.
// Device-to-device copies and memsets are not host traffic and do not trigger it.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

using system_tools::Observe;
using system_tools::ObserveValue;
using system_tools::Percent;

class MemcpyHotPathTool : public ProfilingTool {
 public:
  std::string name() const override { return "memcpy_hot_path"; }
  ToolSource source() const override { return ToolSource::kTimeline; }
  std::string description() const override {
    return "host<->device copies inside the forward call";
  }
  std::vector<std::string> required_metrics() const override {
    return {"timeline.memcpy_count",      "timeline.memcpy_bytes",      "timeline.memcpy_time_us",
            "timeline.memcpy_htod_bytes", "timeline.memcpy_dtoh_bytes", "timeline.end_to_end_us"};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"min_bytes", 1, "bytes", "host<->device bytes per forward call from which the tool fires"},
        {"medium_share", 5, "%",
         "copy time above this share of end-to-end time is a medium finding"},
        {"high_share", 20, "%", "copy time above this share is a high finding"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 52; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double htod = m.Get("timeline.memcpy_htod_bytes"),
                 dtoh = m.Get("timeline.memcpy_dtoh_bytes");
    const double host_bytes = htod + dtoh;
    if (host_bytes < Threshold(c, "min_bytes")) return out;
    const double time = m.Get("timeline.memcpy_time_us");
    const double e2e = m.Get("timeline.end_to_end_us");
    const double share = e2e > 0 ? time / e2e : 0;

    out.triggered = true;
    out.severity = share * 100 > Threshold(c, "high_share")     ? Severity::kHigh
                   : share * 100 > Threshold(c, "medium_share") ? Severity::kMedium
                                                                : Severity::kLow;
    out.title =
        "Host<->device copies in the forward call (" + FormatQuantity(host_bytes, "bytes") + ")";
    out.summary = "The forward call copies " + FormatQuantity(htod, "bytes") +
                  " host-to-device and " + FormatQuantity(dtoh, "bytes") + " device-to-host in " +
                  FormatNumber(m.Get("timeline.memcpy_count")) + " copies taking " +
                  FormatQuantity(time, "us") + " (" + Percent(share) + " of " +
                  FormatQuantity(e2e, "us") + ").";
    Observe(out, m, "timeline.memcpy_count", "copies");
    Observe(out, m, "timeline.memcpy_htod_bytes", "bytes");
    Observe(out, m, "timeline.memcpy_dtoh_bytes", "bytes");
    Observe(out, m, "timeline.memcpy_time_us", "us");
    ObserveValue(out, "copy time share", share * 100, "%");
    out.root_cause =
        "Data crosses the host link on every call: tensors created on the CPU (torch.tensor, "
        "constants, index lists) and moved with .to('cuda'), or results brought back with "
        ".cpu()/.item(). The link is tens of times slower than device memory and a copy from "
        "pageable memory also blocks the host until it completes.";
    out.recommendations = {
        {"Keep inputs, weights and constants on the device: create them once (register_buffer, or "
         "torch.empty(..., device='cuda')) instead of per call",
         "removes up to " + FormatQuantity(time, "us") + " of copy time per call"},
        {"Where a transfer is unavoidable, use pinned host memory and cudaMemcpyAsync / "
         "tensor.to(device, non_blocking=True) so it overlaps with kernels",
         "hides the copy behind GPU work instead of serialising it"}};
    out.code_example =
        "// once, outside the forward:\n"
        "auto table = torch::tensor(values).to(torch::kCUDA);\n"
        "// per call, if a copy must happen:\n"
        "auto host = torch::empty({n}, torch::TensorOptions().pinned_memory(true));\n"
        "auto dev = host.to(torch::kCUDA, /*non_blocking=*/true);\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeMemcpyHotPathTool() {
  return std::make_unique<MemcpyHotPathTool>();
}

}  // namespace kernelpro::tools
