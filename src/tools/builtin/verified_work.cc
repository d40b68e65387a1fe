// verified_work: a candidate whose counters show it did clearly less than the problem needs. It
// read far fewer bytes from DRAM than the problem's inputs hold, or executed far fewer FLOPs than
// the problem's counted FLOPs (tools/work_check.h says how both are measured and when each is
// not computed). Either means the kernel skips work and is correct only on the test inputs, the
// output ignores part of the inputs, or the counters did not see the reads (caches not flushed).
//
// It needs Stage 1 (ToolContext::work): without it the tool stays quiet, as it cannot know what
// the problem needs. Without dram__bytes_read.sum the registry skips it and names the counter;
// without the FP op counters (or with tensor-core work) only the read check runs.
#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"
#include "tools/work_check.h"

namespace kernelpro::tools {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::string_view kDramReadMetric = "dram__bytes_read.sum";

class VerifiedWorkTool : public ProfilingTool {
 public:
  std::string name() const override { return "verified_work"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Counters show far fewer DRAM bytes read or FLOPs executed than the problem needs "
           "(skipped work)";
  }
  // The FLOP check's counters (smsp__sass_thread_inst_executed_op_*_pred_on.sum) are optional:
  // without them only the read check runs, and `kernelpro advise` says why FLOPs went unchecked.
  std::vector<std::string> required_metrics() const override {
    return {std::string(kDramReadMetric)};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"min_read_share", 50, "%",
             "DRAM bytes read below this share of the minimum input bytes triggers (high)"},
            {"min_input_mib", 4, "MiB",
             "the read check runs only for inputs at least this large (smaller ones fit in L2 or "
             "drown in noise)"},
            {"min_flop_share", 10, "%",
             "CUDA-core FLOPs below this share of the counted FLOPs triggers (high)"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override { return ncu_tools::AllClasses(); }
  // Above every performance tool: a kernel that skips work makes its speed meaningless.
  int priority() const override { return 95; }

  ToolOutput Analyze(const MetricSet&, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    if (!c.work || c.metrics == nullptr) return out;  // no yardstick: nothing to verify
    const WorkCheck check = CheckWork(*c.metrics, *c.work);
    if (check.read_share)
      out.observed.push_back({"dram_bytes_read / min_input_bytes", *check.read_share * 100, "%"});
    if (check.flop_share)
      out.observed.push_back({"executed_flops / counted_flops", *check.flop_share * 100, "%"});

    const double read_limit = Threshold(c, "min_read_share");
    const bool read_low = check.read_share &&
                          check.min_input_bytes >= Threshold(c, "min_input_mib") * kMiB &&
                          *check.read_share * 100 < read_limit;
    const double flop_limit = Threshold(c, "min_flop_share");
    const bool flops_low = check.flop_share && *check.flop_share * 100 < flop_limit;
    if (!read_low && !flops_low) return out;

    out.triggered = true;
    out.severity = Severity::kHigh;
    const std::string read_pct = read_low ? FormatNumber(*check.read_share * 100) + " %" : "";
    const std::string flop_pct = flops_low ? FormatNumber(*check.flop_share * 100) + " %" : "";
    if (read_low && flops_low) {
      out.title = "Kernel read only " + read_pct + " of its inputs and executed only " + flop_pct +
                  " of the problem's FLOPs";
    } else if (read_low) {
      out.title = "Kernel read only " + read_pct +
                  " of its inputs from DRAM: it did not read all "
                  "its inputs";
    } else {
      out.title = "Kernel executed only " + flop_pct +
                  " of the problem's FLOPs: it did far less work than the problem needs";
    }
    std::vector<std::string> facts;
    if (read_low) {
      facts.push_back("it read " + SiQuantity(*check.bytes_read, "B") +
                      " from DRAM against the problem's minimum inputs of " +
                      SiQuantity(check.min_input_bytes, "B") + " (" + read_pct +
                      ", trigger below " + ncu_tools::Pct(read_limit) + ")");
    }
    if (flops_low) {
      facts.push_back("it executed " + SiQuantity(*check.executed_flops, "FLOP") +
                      " on CUDA cores against the problem's " +
                      SiQuantity(check.counted_flops, "FLOP") + " counted FLOPs (" + flop_pct +
                      ", trigger below " + ncu_tools::Pct(flop_limit) +
                      "; no tensor-core instructions in its SASS)");
    }
    out.summary = "Over the profiled forward call " + facts[0] +
                  (facts.size() > 1 ? "; " + facts[1] : std::string()) + ".";
    out.root_cause =
        "ncu replays each kernel with its caches flushed (--cache-control all), so every input "
        "byte a kernel uses comes from DRAM at least once, and the problem's GEMM/convolution "
        "FLOPs must be executed at least once. Clearly less means one of: the kernel skips work "
        "(a grid, bound or early exit that stops short) and is correct only on the test inputs; "
        "the output does not depend on part of the inputs (structure such as triangular or "
        "masked inputs, or an algebraic shortcut valid for every input); or the reads were not "
        "seen (inputs still in L2 because ncu ran without cache flushing).";
    out.recommendations = {
        {"Check that every output element is computed from all the inputs it depends on: grid "
         "size, loop bounds and early exits against the problem's shapes; test with other "
         "shapes and input values",
         "correctness on inputs the tests did not try"},
        {"If the shortcut holds for every input (the output truly ignores those bytes or "
         "FLOPs), say so in a comment beside the kernel so the finding is expected",
         "none: the speedup stands"},
    };
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeVerifiedWorkTool() {
  return std::make_unique<VerifiedWorkTool>();
}

}  // namespace kernelpro::tools
