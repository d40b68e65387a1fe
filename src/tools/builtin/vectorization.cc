// vectorization: a memory-bound kernel that moves global data 32 bits at a time. Evidence, best
// first: the SASS view (sass.global_load_32/_64/_128, sass.global_store_*: no 64/128-bit global
// access at all), else ncu's executed-width counters
// (smsp__sass_inst_executed_op_memory_{32,64,128}b: no 64/128-bit memory instruction executed),
// else sectors per load request of about 4 (a coalesced warp of 32-bit accesses). Narrow accesses
// cost more instructions per byte (LSU queue pressure, lg_throttle) and fewer bytes in flight per
// thread.
#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;

class VectorizationTool : public ProfilingTool {
 public:
  std::string name() const override { return "vectorization"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Memory-bound kernel issuing only 32-bit global loads/stores (no float4/half2 vector "
           "access)";
  }
  std::vector<std::string> required_metrics() const override {
    return {
        std::string(profile::kNcuGlobalLoadSectors), std::string(profile::kNcuGlobalLoadRequests),
        std::string(profile::kNcuMemoryThroughputPct), std::string(profile::kNcuSmThroughputPct)};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"max_narrow_sectors", 4.5, "sectors",
             "without SASS or width counters: loads at or below this many sectors/request count as "
             "32-bit"},
            {"dram_headroom", 60, "%",
             "DRAM throughput below this makes the finding high (medium otherwise)"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kMemory, roofline::Bottleneck::kMixed};
  }
  int priority() const override { return 72; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    if (!ncu_tools::MemoryHeavy(m, c, {roofline::Bottleneck::kMixed})) return out;
    const double requests = m.Get(profile::kNcuGlobalLoadRequests);
    if (requests <= 0) return out;  // no global loads through the LSU (TMA, cp.async.bulk, ...)
    std::string evidence;
    bool narrow = false;
    if (m.Has("sass.global_load_32")) {
      const double wide = m.Get("sass.global_load_64") + m.Get("sass.global_load_128") +
                          m.Get("sass.global_store_64") + m.Get("sass.global_store_128") +
                          m.Get("sass.ldgsts") + m.Get("sass.tma");
      const double scalar = m.Get("sass.global_load_32") + m.Get("sass.global_store_32");
      narrow = wide == 0 && scalar > 0;
      out.observed.push_back({"sass.global_load_32", m.Get("sass.global_load_32"), "instructions"});
      out.observed.push_back(
          {"sass.global_load_128", m.Get("sass.global_load_128"), "instructions"});
      evidence = "the SASS has " + FormatNumber(scalar) +
                 " 32-bit global load/store instruction(s) and no 64- or 128-bit ones";
    } else if (m.Has("smsp__sass_inst_executed_op_memory_32b.sum") &&
               m.Has("smsp__sass_inst_executed_op_memory_128b.sum")) {
      const double n32 = m.Get("smsp__sass_inst_executed_op_memory_32b.sum");
      const double wide = m.Get("smsp__sass_inst_executed_op_memory_64b.sum") +
                          m.Get("smsp__sass_inst_executed_op_memory_128b.sum");
      narrow = wide == 0 && n32 > 0;
      evidence = "all " + FormatNumber(n32) + " executed memory instructions are 32-bit";
    } else {
      const double spr = m.Get(profile::kNcuGlobalLoadSectors) / requests;
      narrow = spr <= Threshold(c, "max_narrow_sectors");
      evidence = "global loads average " + FormatNumber(spr) +
                 " sectors per request, the signature of 32-bit accesses";
    }
    if (!narrow) return out;
    out.triggered = true;
    std::optional<double> dram = m.Find(profile::kNcuDramThroughputPct);
    if (dram) out.observed.push_back({std::string(profile::kNcuDramThroughputPct), *dram, "%"});
    out.observed.push_back({std::string(profile::kNcuMemoryThroughputPct),
                            m.Get(profile::kNcuMemoryThroughputPct), "%"});
    const double headroom = Threshold(c, "dram_headroom");
    out.severity = dram && *dram < headroom ? Severity::kHigh : Severity::kMedium;
    out.title = "Memory-bound kernel uses only 32-bit global accesses";
    out.summary = "In this " + ncu_tools::ClassWord(c) + " kernel " + evidence + ".";
    if (dram) out.summary += " DRAM throughput is " + Pct(*dram) + " of peak.";
    out.root_cause =
        "Each thread moves 4 bytes per instruction, so the kernel needs four times the load/store "
        "instructions of a float4 version and keeps fewer bytes in flight per thread; the "
        "load/store "
        "queue and the latency of each request, not the DRAM, set the pace.";
    out.recommendations = {
        {"Load and store 16 bytes per thread: reinterpret as float4/int4 (or half2/bf162 pairs "
         "x4), with a "
         "scalar loop for the remainder",
         dram
             ? "up to " + FormatNumber(85.0 / std::max(*dram, 1.0), 2) + "x (to ~85 % of DRAM peak)"
             : "1.3-2x on bandwidth-bound kernels"},
        {"Guarantee alignment (cudaMalloc gives 256 B; offsets must be multiples of 4 elements) "
         "and mark "
         "inputs const __restrict__ or read them with __ldg()",
         "enables the 128-bit path"},
        {"Process several vectors per thread (unrolled) so more bytes are in flight",
         "1.1-1.3x more"},
    };
    out.code_example =
        "const float4* in4 = reinterpret_cast<const float4*>(in);\n"
        "float4* out4 = reinterpret_cast<float4*>(out);\n"
        "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += gridDim.x * "
        "blockDim.x) {\n"
        "  float4 v = __ldg(&in4[i]);\n"
        "  v.x = f(v.x); v.y = f(v.y); v.z = f(v.z); v.w = f(v.w);\n"
        "  out4[i] = v;\n}\n// then a scalar loop for the n % 4 tail";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeVectorizationTool() {
  return std::make_unique<VectorizationTool>();
}

}  // namespace kernelpro::tools
