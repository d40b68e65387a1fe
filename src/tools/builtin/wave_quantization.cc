// wave_quantization: the last wave of blocks only partly fills the GPU (tail effect), or the whole
// grid is smaller than the number of SMs. Efficiency = waves / ceil(waves) when there is at least
// one full wave; for less than one wave, the share of SMs that get a block at all.
#include <algorithm>
#include <cmath>

#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;

constexpr const char* kWaves = "launch__waves_per_multiprocessor";
constexpr const char* kGridSize = "launch__grid_size";
constexpr const char* kSmCount = "device__attribute_multiprocessor_count";

class WaveQuantizationTool : public ProfilingTool {
 public:
  std::string name() const override { return "wave_quantization"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Partial last wave of blocks (tail effect) or a grid smaller than the SM count";
  }
  std::vector<std::string> required_metrics() const override { return {kWaves}; }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"min_efficiency", 75, "%", "SM-time used by the waves below this triggers (medium)"},
            {"poor_efficiency", 50, "%", "below this: high"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override { return ncu_tools::AllClasses(); }
  int priority() const override { return 50; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double waves = m.Get(kWaves);
    out.observed.push_back({kWaves, waves, "waves"});
    auto grid = m.Find(kGridSize);
    auto sms = m.Find(kSmCount);
    if (grid) out.observed.push_back({kGridSize, *grid, "blocks"});
    if (sms) out.observed.push_back({kSmCount, *sms, "SMs"});
    if (waves <= 0 && !grid) return out;
    double efficiency;
    bool small_grid = false;
    if (waves < 1) {
      if (grid && sms && *sms > 0) {
        efficiency = 100 * std::min(1.0, *grid / *sms);
      } else {
        efficiency = 100 * waves;
      }
      small_grid = efficiency < 100;
    } else {
      efficiency = 100 * waves / std::ceil(waves - 1e-9);
    }
    out.observed.push_back({"wave_efficiency", efficiency, "%"});
    if (efficiency >= Threshold(c, "min_efficiency")) return out;
    out.triggered = true;
    out.severity =
        efficiency < Threshold(c, "poor_efficiency") ? Severity::kHigh : Severity::kMedium;
    const std::string sm_text = sms ? FormatNumber(*sms) + " SMs" : "the SMs";
    if (small_grid) {
      out.title = "The grid leaves most SMs idle";
      out.summary = "The launch has " +
                    (grid ? FormatNumber(*grid) + " block(s)" : FormatNumber(waves, 2) + " waves") +
                    " for " + sm_text + ": only " + Pct(efficiency) +
                    " of the SMs get work (trigger below " + Pct(Threshold(c, "min_efficiency")) +
                    ").";
      out.root_cause =
          "There are fewer blocks than SMs, so the GPU runs at a fraction of its width for the "
          "whole kernel.";
    } else {
      const double full = std::floor(waves);
      out.title = "Partial last wave of blocks (tail effect)";
      out.summary = "The grid runs " + FormatNumber(waves, 3) + " waves: " + FormatNumber(full) +
                    " full wave(s) and a last wave " + Pct(100 * (waves - full)) +
                    " full, so SMs are busy " + Pct(efficiency) + " of the time (trigger below " +
                    Pct(Threshold(c, "min_efficiency")) + ").";
      out.root_cause =
          "The number of blocks is not a multiple of what the GPU runs at once (SMs x blocks per "
          "SM); "
          "during the last wave most SMs idle.";
    }
    out.recommendations = {
        {"Size the grid to a multiple of " +
             (sms ? FormatNumber(*sms) : std::string("the SM count")) +
             " x blocks-per-SM: change the tile size so the block count divides evenly",
         "up to " + FormatNumber(100 / efficiency, 2) + "x on this kernel"},
        {"Use a persistent kernel: launch one wave of blocks that loop over tiles (grid-stride or "
         "an atomic "
         "tile counter)",
         "removes the tail"},
        {"For GEMM-like kernels with few output tiles, split the K dimension (split-K / stream-K) "
         "to create "
         "more blocks",
         "1.2-2x when the grid is small"},
    };
    out.code_example =
        "int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);\n"
        "int per_sm; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, "
        "smem);\n"
        "kernel<<<sms * per_sm, threads, smem>>>(...);  // persistent: blocks loop over tiles";
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeWaveQuantizationTool() {
  return std::make_unique<WaveQuantizationTool>();
}

}  // namespace kernelpro::tools
