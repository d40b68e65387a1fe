// kernel_fusion: the forward call is many short kernels. Each launch then costs about as much as
// the work it carries, and every intermediate tensor makes a round trip through global memory;
// fusing the chain removes both.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

using system_tools::Observe;
using system_tools::ObserveValue;
using system_tools::Times;

class KernelFusionTool : public ProfilingTool {
 public:
  std::string name() const override { return "kernel_fusion"; }
  ToolSource source() const override { return ToolSource::kTimeline; }
  std::string description() const override {
    return "many short kernels per forward call: fusion would remove launches and memory round "
           "trips";
  }
  std::vector<std::string> required_metrics() const override {
    return {"timeline.kernel_count", "timeline.gpu_busy_us", "timeline.end_to_end_us"};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"min_kernels", 8, "kernels", "at least this many launches per forward call"},
        {"max_avg_kernel_us", 5, "us", "average GPU time per kernel below this is a short kernel"},
        {"high_kernels", 50, "kernels", "this many short launches or more is a high finding"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 55; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double kernels = m.Get("timeline.kernel_count");
    const double busy = m.Get("timeline.gpu_busy_us");
    const double e2e = m.Get("timeline.end_to_end_us");
    if (kernels < Threshold(c, "min_kernels") || kernels <= 0) return out;
    const double avg = busy / kernels;
    if (avg >= Threshold(c, "max_avg_kernel_us")) return out;

    out.triggered = true;
    out.severity = kernels >= Threshold(c, "high_kernels") ? Severity::kHigh : Severity::kMedium;
    // Launch gaps disappear with one fused kernel; the GPU time itself also shrinks as
    // intermediates stop going through DRAM, which this bound does not count.
    const double bound = busy > 0 ? std::max(1.0, e2e / busy) : 1.0;
    out.title = FormatNumber(kernels) + " short kernels per forward call (" +
                FormatQuantity(avg, "us") + " of GPU time each)";
    out.summary = "The forward call launches " + FormatNumber(kernels) + " kernels that average " +
                  FormatQuantity(avg, "us") + " of GPU time, " + FormatQuantity(busy, "us") +
                  " busy in a " + FormatQuantity(e2e, "us") +
                  " call; fusing them removes the launches between them (up to " + Times(bound) +
                  ") and the global-memory round trips of their intermediates.";
    Observe(out, m, "timeline.kernel_count", "kernels");
    ObserveValue(out, "average GPU time per kernel", avg, "us");
    Observe(out, m, "timeline.gpu_busy_us", "us");
    Observe(out, m, "timeline.end_to_end_us", "us");
    out.root_cause =
        "The computation is split into many kernels that each do a few microseconds of work, "
        "typically one elementwise step each: every step pays a launch and writes its result to "
        "global memory only for the next kernel to read it back.";
    out.recommendations = {
        {"Fuse each chain of elementwise and reduction steps into one kernel that keeps "
         "intermediates in "
         "registers or shared memory; aim for one kernel per forward call",
         "up to " + Times(bound) +
             " from launches alone, more when intermediates no longer round-trip "
             "through DRAM"},
        {"Where steps cannot be fused (a library GEMM in between), fold the elementwise work into "
         "its "
         "prologue or epilogue, or capture the remaining launches in a CUDA Graph",
         "removes most of the remaining launch gaps"}};
    out.code_example =
        "// one pass instead of a kernel per operation\n"
        "__global__ void fused(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) { float v = x[i]; v = v * a + b; v = fmaxf(v, 0.f); y[i] = v * v; }\n"
        "}\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeKernelFusionTool() {
  return std::make_unique<KernelFusionTool>();
}

}  // namespace kernelpro::tools
