// fast_math_intrinsics: IEEE-accurate fp32 operations in a bandwidth-bound kernel, where the
// fast intrinsics would do (the extension the paper leaves to future work, appendix I.3; the
// Swish example of §5.5).
//
// What IEEE operations look like in SASS (sm_90, nvcc defaults -prec-div=true -prec-sqrt=true):
//   x / y       MUFU.RCP, an FFMA refinement, FCHK (does the fast path hold for these operands?),
//               a branch, and a CALL.REL.NOINC to a slow-path subroutine of about 100
//               instructions. __fdividef(x, y) is MUFU.RCP + FMUL.
//   1.0f / y    the same without FCHK (MUFU.RCP, FFMA fix-ups, range check, CALL).
//   sqrtf(y)    MUFU.RSQ, FFMA fix-ups, range check, CALL. rsqrtf(y) is a single MUFU.RSQ.
// So FCHK counts divisions, and the CALLs beyond them count IEEE reciprocals and square roots.
//
// Static counts cannot tell a division per element from one per row (rms_norm's sum / cols, the
// 1.0f / sum of a softmax): those are not worth touching. The tool compares the IEEE sites with
// the elements the kernel loads or stores per pass (global access instructions weighted by their
// width) and fires only when there is at least `min_sites_per_element` of them.
//
// In a bandwidth-bound kernel the extra instructions hide under memory stalls: the gain is issue
// slots and energy, not time, and the output says so.
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

namespace st = system_tools;
using st::Observe;
using st::ObserveValue;

// Static instructions the IEEE forms add over the intrinsics: about 8 inline per site (refinement,
// range check, branch) and one slow-path subroutine of about 90 per kernel that has any (sites of
// one kernel share it). Calibrated on tests/fixtures/h200/k_swish_scalar: 144 instructions, about
// 100 of them for its one division.
constexpr double kStaticInlinePerSite = 8;
constexpr double kStaticSlowPathPerKernel = 90;
// Executed instructions per element on the fast path: refinement FFMAs, FCHK / range check and
// the branch, against one FMUL for the intrinsic.
constexpr double kExecutedPerDivision = 5;
constexpr double kExecutedPerOther = 4;

double Elements(const MetricSet& m, const std::string& prefix) {
  return 4 * m.Get("sass." + prefix + "_128") + 2 * m.Get("sass." + prefix + "_64") +
         m.Get("sass." + prefix + "_32") + m.Get("sass." + prefix + "_narrow");
}

class FastMathIntrinsicsTool : public ProfilingTool {
 public:
  std::string name() const override { return "fast_math_intrinsics"; }
  ToolSource source() const override { return ToolSource::kSass; }
  std::string description() const override {
    return "IEEE fp32 division / reciprocal / sqrt sequences in a bandwidth-bound kernel that fast "
           "intrinsics would replace";
  }
  std::vector<std::string> required_metrics() const override {
    return {"sass.instructions",
            "sass.mufu",
            "sass.ffma",
            "sass.global_load_128",
            "sass.global_load_64",
            "sass.global_load_32",
            "sass.global_load_narrow",
            "sass.global_store_128",
            "sass.global_store_64",
            "sass.global_store_32",
            "sass.global_store_narrow"};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"min_sites", 1, "sites",
         "IEEE division/reciprocal/sqrt sequences from which the tool fires"},
        {"min_sites_per_element", 0.25, "sites/element",
         "IEEE sites per element loaded or stored: below this they run once per row, not per "
         "element"},
        {"medium_static_share", 30, "%",
         "estimated IEEE instructions above this share of the static count is a medium finding"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kMemory};
  }
  int priority() const override { return 30; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    // Bandwidth-bound: the Stage-1 class, else ncu's two roofline throughputs.
    bool memory_bound = false;
    if (c.bottleneck) {
      memory_bound = *c.bottleneck == roofline::Bottleneck::kMemory;
    } else if (m.Has(st::kMemThroughput) && m.Has(st::kSmThroughput)) {
      memory_bound = m.Get(st::kMemThroughput) > m.Get(st::kSmThroughput);
    }
    if (!memory_bound) return out;

    const double fchk = m.Get("sass.op.FCHK");
    const double calls = m.Get("sass.op.CALL");
    const double divisions = fchk;
    const double others = std::max(0.0, calls - fchk);  // IEEE reciprocal / sqrt slow paths
    const double sites = divisions + others;
    const double elements = std::max(Elements(m, "global_load"), Elements(m, "global_store"));
    const double per_element = elements > 0 ? sites / elements : sites;
    if (sites < Threshold(c, "min_sites") || per_element < Threshold(c, "min_sites_per_element"))
      return out;

    const double instructions = m.Get("sass.instructions");
    const double kernels = std::max(1.0, m.Get("sass.kernels"));
    const double static_saved =
        std::min(instructions, sites * kStaticInlinePerSite +
                                   std::min(kernels, sites) * kStaticSlowPathPerKernel);
    const double static_share = instructions > 0 ? static_saved / instructions : 0;
    const double executed_per_pass = divisions * kExecutedPerDivision + others * kExecutedPerOther;

    out.triggered = true;
    out.severity = static_share * 100 > Threshold(c, "medium_static_share") ? Severity::kMedium
                                                                            : Severity::kLow;
    std::string what = FormatNumber(divisions) + " IEEE division(s)";
    if (others > 0) what += " and " + FormatNumber(others) + " IEEE reciprocal/sqrt sequence(s)";
    out.title = "IEEE math in a bandwidth-bound kernel: " + what;
    out.summary = "The kernel is bandwidth-bound and its " + FormatNumber(instructions) +
                  " static SASS instructions include " + what + " (" + FormatNumber(fchk) +
                  " FCHK, " + FormatNumber(calls) + " slow-path CALL) for " +
                  FormatNumber(elements) +
                  " element(s) loaded or stored per pass. Fast intrinsics would remove about " +
                  FormatNumber(static_saved) + " static instructions (" +
                  st::Percent(static_share) + ") and about " + FormatNumber(executed_per_pass) +
                  " executed instructions per pass; since memory sets the "
                  "pace this saves issue slots and energy, not time.";
    Observe(out, m, "sass.instructions", "instructions");
    Observe(out, m, "sass.op.FCHK", "instructions");
    Observe(out, m, "sass.op.CALL", "instructions");
    Observe(out, m, "sass.mufu", "instructions");
    Observe(out, m, "sass.ffma", "instructions");
    ObserveValue(out, "IEEE sites per element", per_element, "sites/element");
    ObserveValue(out, "estimated static instructions saved", static_saved, "instructions");
    Observe(out, m, st::kMemThroughput, "%");
    Observe(out, m, st::kSmThroughput, "%");
    out.root_cause =
        "By default nvcc compiles x / y, 1.0f / y and sqrtf(y) to IEEE round-to-nearest "
        "sequences: a MUFU approximation, FFMA refinement steps, an operand range check (FCHK) "
        "and a branch to a long slow-path subroutine for denormals and overflow. The fast "
        "intrinsics are one or two instructions with a few ulp of error. In a kernel that waits "
        "on memory the extra work hides under the stalls but is still executed for every element.";
    out.recommendations = {
        {"Where a few ulp of error are acceptable, use __fdividef(x, y) for division and for "
         "reciprocals "
         "(__frcp_rn is the IEEE-rounded reciprocal and keeps the slow path), rsqrtf(y) or y * "
         "rsqrtf(y) "
         "for square roots and __expf for exponentials, or build with -use_fast_math (or "
         "-prec-div=false "
         "-prec-sqrt=false)",
         "about " + FormatNumber(static_saved) + " fewer static and " +
             FormatNumber(executed_per_pass) +
             " fewer executed instructions per pass; energy, not speed, in a bandwidth-bound "
             "kernel"},
        {"Rewrite divisions by a value that is reused as one reciprocal and multiplications",
         "one IEEE sequence instead of one per element"}};
    out.code_example =
        "// before: IEEE division, FCHK + refinement + slow-path CALL per element\n"
        "y[i] = v / (1.0f + expf(-v));\n"
        "// after: one MUFU.EX2 and one MUFU.RCP + FMUL\n"
        "y[i] = __fdividef(v, 1.0f + __expf(-v));\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeFastMathIntrinsicsTool() {
  return std::make_unique<FastMathIntrinsicsTool>();
}

}  // namespace kernelpro::tools
