// global_coalescing: global loads/stores touching more 32-byte sectors per request than their
// access width needs. A warp request of 32 threads x W bytes ideally touches 32*W/32 = W sectors:
// 4 for 32-bit, 8 for 64-bit, 16 for 128-bit (float4) accesses. So 16 sectors/request is perfect
// for a float4 kernel and 4x waste for a scalar one: the width comes from the SASS view
// (sass.global_load_32/_64/_128, sass.global_store_*) when present. Without it, only ratios above
// 16 (more than any coalesced access of any width needs) are flagged, against the 128-bit ideal.
// The .ratio metrics are a fallback when the sum counters are missing; never required.
#include <algorithm>

#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

constexpr const char* kLdRatio =
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio";
constexpr const char* kStRatio =
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio";

struct Op {
  std::string kind;  // "load" / "store"
  double sectors_per_request = 0;
  double sectors = 0;
  double ideal = 0;
  bool width_known = false;
  double waste() const { return ideal > 0 ? sectors_per_request / ideal : 0; }
};

// The ideal sectors/request from the SASS widths: the widest width present. SASS counts are static,
// so a vectorised kernel with a scalar remainder loop has more 32-bit than 128-bit instructions
// although nearly all traffic is 128-bit; taking the widest width never calls such a kernel
// uncoalesced (it can miss a strided scalar access next to vector ones).
std::optional<double> IdealFromSass(const MetricSet& m, const std::string& prefix) {
  for (auto [suffix, sectors] :
       {std::pair{"_128", 16.0}, {"_64", 8.0}, {"_32", 4.0}, {"_narrow", 4.0}}) {
    if (auto v = m.Find(prefix + suffix); v && *v > 0) return sectors;
  }
  return std::nullopt;
}

class GlobalCoalescingTool : public ProfilingTool {
 public:
  std::string name() const override { return "global_coalescing"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Global loads/stores touching more 32-byte sectors per request than their width needs "
           "(uncoalesced)";
  }
  std::vector<std::string> required_metrics() const override {
    return {std::string(profile::kNcuGlobalLoadSectors),
            std::string(profile::kNcuGlobalLoadRequests),
            std::string(profile::kNcuGlobalStoreSectors),
            std::string(profile::kNcuGlobalStoreRequests)};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"waste", 2, "x",
             "sectors/request at or above this multiple of the ideal triggers (medium)"},
            {"high_waste", 4, "x", "at or above: high"},
            {"critical_waste", 8, "x", "at or above: critical (every thread its own sector)"},
            {"min_share", 5, "%", "ops moving less than this share of global sectors are ignored"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kMemory, roofline::Bottleneck::kMixed,
            roofline::Bottleneck::kLatency};
  }
  int priority() const override { return 78; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    Op ops[2];
    const char* sectors_names[2] = {profile::kNcuGlobalLoadSectors.data(),
                                    profile::kNcuGlobalStoreSectors.data()};
    const char* request_names[2] = {profile::kNcuGlobalLoadRequests.data(),
                                    profile::kNcuGlobalStoreRequests.data()};
    const char* ratio_names[2] = {kLdRatio, kStRatio};
    const char* sass_prefix[2] = {"sass.global_load", "sass.global_store"};
    double total_sectors = 0;
    for (int i = 0; i < 2; ++i) {
      Op& op = ops[i];
      op.kind = i == 0 ? "load" : "store";
      op.sectors = m.Get(sectors_names[i]);
      const double requests = m.Get(request_names[i]);
      if (requests > 0) {
        op.sectors_per_request = op.sectors / requests;
      } else if (auto r = m.Find(ratio_names[i])) {
        op.sectors_per_request = *r;
      }
      total_sectors += op.sectors;
      auto ideal = IdealFromSass(m, sass_prefix[i]);
      op.width_known = ideal.has_value();
      op.ideal = ideal.value_or(16);
      out.observed.push_back(
          {"global_" + op.kind + "_sectors_per_request", op.sectors_per_request, "sectors"});
    }
    const double waste_t = Threshold(c, "waste");
    const Op* worst = nullptr;
    for (const Op& op : ops) {
      if (op.sectors_per_request <= 0) continue;
      if (total_sectors > 0 && 100 * op.sectors / total_sectors < Threshold(c, "min_share"))
        continue;
      if (op.waste() < waste_t) continue;
      if (!worst || op.waste() > worst->waste()) worst = &op;
    }
    if (!worst) return out;
    out.triggered = true;
    const double waste = worst->waste();
    out.severity = waste >= Threshold(c, "critical_waste") ? Severity::kCritical
                   : waste >= Threshold(c, "high_waste")   ? Severity::kHigh
                                                           : Severity::kMedium;
    out.observed.push_back(
        {"global_" + worst->kind + "_ideal_sectors_per_request", worst->ideal, "sectors"});
    out.title = "Uncoalesced global " + worst->kind + "s";
    out.summary = "Global " + worst->kind + "s touch " + FormatNumber(worst->sectors_per_request) +
                  " sectors per request where " + FormatNumber(worst->ideal) + " would do (" +
                  (worst->width_known ? "the SASS access width" : "even for 128-bit accesses") +
                  "): " + FormatNumber(waste, 2) + "x the necessary memory traffic (trigger at " +
                  FormatNumber(waste_t) + "x).";
    for (const Op& op : ops) {
      if (&op != worst && op.sectors_per_request > 0) {
        out.summary += " " + std::string(op.kind == "load" ? "Loads" : "Stores") + ": " +
                       FormatNumber(op.sectors_per_request) + " sectors/request.";
      }
    }
    out.root_cause =
        "Neighbouring threads of a warp access addresses far apart (strided or column-wise "
        "indexing, "
        "array-of-structs fields), so one warp instruction fetches many 32-byte sectors and uses a "
        "few "
        "bytes of each. The memory system moves the whole sectors anyway.";
    out.recommendations = {
        {"Make threadIdx.x index the contiguous (innermost) dimension, so a warp reads/writes "
         "consecutive words",
         "up to " + FormatNumber(waste, 2) + "x less " + worst->kind + " traffic"},
        {"When the access pattern is a transpose, go through a shared-memory tile: read rows "
         "coalesced, "
         "write columns from shared memory (pad the tile by one column to avoid bank conflicts)",
         "2-8x on transpose-like kernels"},
        {"Turn arrays of structs into structs of arrays", "1.5-4x on field-wise access"},
    };
    out.code_example =
        "__shared__ float tile[32][33];  // +1 column: no bank conflicts\n"
        "tile[threadIdx.y][threadIdx.x] = in[(by + threadIdx.y) * n + bx + threadIdx.x];  // "
        "coalesced read\n"
        "__syncthreads();\n"
        "out[(bx + threadIdx.y) * n + by + threadIdx.x] = tile[threadIdx.x][threadIdx.y];  // "
        "coalesced write";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeGlobalCoalescingTool() {
  return std::make_unique<GlobalCoalescingTool>();
}

}  // namespace kernelpro::tools
