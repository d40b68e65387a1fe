// energy_uncoalesced (energy-only): global accesses that fetch more 32-byte sectors per request
// than their width needs, while the matching stall is low (loads: long scoreboard; stores: LSU
// throttle), so the extra sectors cost energy but no time.
//
// The ideal sectors per request follow the access width: a warp of 4-byte loads needs 4 sectors,
// 8-byte 8, 16-byte (float4) 16, 1-2 byte 1-2. Static counts cannot say which width dominates at
// run time, so the ideal is the widest width the SASS shows (global_load_* / global_store_*), and
// 16 (float4) without SASS: a kernel is never flagged for vectorised access. Sectors and requests
// come from the .sum counters (the .ratio metrics may be absent).
#include <algorithm>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

namespace st = system_tools;
using st::Observe;
using st::ObserveValue;

constexpr double kPicojoulesPerExcessSector = 100;  // DESIGN.md §6, energy proxy term B2

// Ideal sectors per request for the widest access of `prefix` ("global_load") in the SASS; 16
// when the SASS is absent or shows none.
double IdealSectors(const MetricSet& m, const std::string& prefix) {
  if (m.Get("sass." + prefix + "_128") > 0) return 16;
  if (m.Get("sass." + prefix + "_64") > 0) return 8;
  if (m.Get("sass." + prefix + "_32") > 0) return 4;
  if (m.Get("sass." + prefix + "_narrow") > 0) return 2;
  return 16;
}

struct Side {
  std::string what;  // "loads" / "stores"
  double sectors = 0, requests = 0, ideal = 4, stall = 0;
  std::string stall_name;
  double ratio() const { return requests > 0 ? sectors / requests : 0; }
  double excess() const { return std::max(0.0, sectors - requests * ideal); }
};

class EnergyUncoalescedTool : public ProfilingTool {
 public:
  std::string name() const override { return "energy_uncoalesced"; }
  ToolSource source() const override { return ToolSource::kEnergy; }
  std::string description() const override {
    return "latency-hidden uncoalesced global access: extra sectors that cost energy, not time";
  }
  std::vector<std::string> required_metrics() const override {
    return {st::kGlobalLdSectors, st::kGlobalLdRequests, st::kLongScoreboard};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"excess_factor", 2, "x",
             "sectors per request above this multiple of the ideal for the width"},
            {"stall_low", 15, "%",
             "long-scoreboard (loads) / lg-throttle (stores) stall below this: hidden"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {std::begin(roofline::kAllBottlenecks), std::end(roofline::kAllBottlenecks)};
  }
  int priority() const override { return 22; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double factor = Threshold(c, "excess_factor"), low = Threshold(c, "stall_low");
    std::vector<Side> sides;
    sides.push_back({"loads", m.Get(st::kGlobalLdSectors), m.Get(st::kGlobalLdRequests),
                     IdealSectors(m, "global_load"), m.Get(st::kLongScoreboard),
                     "long-scoreboard"});
    if (m.Has(st::kGlobalStSectors) && m.Has(st::kGlobalStRequests) && m.Has(st::kLgThrottle)) {
      sides.push_back({"stores", m.Get(st::kGlobalStSectors), m.Get(st::kGlobalStRequests),
                       IdealSectors(m, "global_store"), m.Get(st::kLgThrottle), "lg-throttle"});
    }
    std::vector<const Side*> hits;
    for (const Side& s : sides) {
      if (s.requests > 0 && s.ratio() > s.ideal * factor && s.stall < low) hits.push_back(&s);
    }
    if (hits.empty()) return out;

    out.triggered = true;
    out.severity = Severity::kLow;
    double excess = 0;
    std::string parts;
    for (const Side* s : hits) {
      excess += s->excess();
      parts += (parts.empty() ? "" : "; ") + s->what + " fetch " + FormatNumber(s->ratio()) +
               " sectors per request against an ideal of " + FormatNumber(s->ideal) + " (" +
               s->stall_name + " stall " + FormatQuantity(s->stall, "%") + ")";
      Observe(out, m, s->what == "loads" ? st::kGlobalLdSectors : st::kGlobalStSectors, "sectors");
      Observe(out, m, s->what == "loads" ? st::kGlobalLdRequests : st::kGlobalStRequests,
              "requests");
      ObserveValue(out, "sectors per request (" + s->what + ")", s->ratio(), "sectors");
      ObserveValue(out, "ideal sectors per request (" + s->what + ")", s->ideal, "sectors");
      Observe(out, m, s->what == "loads" ? st::kLongScoreboard : st::kLgThrottle, "%");
    }
    const double microjoules = excess * kPicojoulesPerExcessSector * 1e-6;
    ObserveValue(out, "excess sectors", excess, "sectors");
    out.title = "Hidden uncoalesced global access: " + FormatNumber(excess) + " excess sectors";
    out.summary = "Global " + parts + ". The stalls are low, so the " + FormatNumber(excess) +
                  " extra sectors (about " + st::Energy(microjoules) +
                  " per launch by the energy proxy) cost energy, not time.";
    out.root_cause =
        "Neighbouring threads of a warp touch addresses far apart (strided or indirect indexing), "
        "so each request is split over many 32-byte sectors that are fetched only partly used; "
        "enough parallelism hides the delay, but the cache and memory system still move every "
        "sector.";
    out.recommendations = {
        {"Make consecutive threads access consecutive addresses: swap the index roles, stage a "
         "transposed "
         "tile through shared memory, or use a structure-of-arrays layout",
         "up to " + FormatNumber(excess) + " fewer sectors per launch (about " +
             st::Energy(microjoules) + "), same speed"}};
    out.code_example =
        "// thread x walks the contiguous dimension\n"
        "out[row * n + threadIdx.x + blockIdx.x * blockDim.x] = v;   // not out[(col) * n + row]\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeEnergyUncoalescedTool() {
  return std::make_unique<EnergyUncoalescedTool>();
}

}  // namespace kernelpro::tools
