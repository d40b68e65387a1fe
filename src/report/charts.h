// The run report's figures, each an inline SVG (report/svg.h) built from plain facts, so a figure
// can be tested on a handful of numbers without a run:
//
//   SpeedupChart   best speedup over the reference after each iteration, its interval as a band,
//                  every candidate of every iteration as a point, the reference's 1x as a line;
//   TreeChart      the search tree drawn top-down, each node a circle coloured by its status and
//                  sized by its MCTS visits, edges parent → child, the best node ringed;
//   RooflineChart  log-log arithmetic intensity against achieved FLOP/s under the GPU's memory and
//                  compute roofs, with the reference and the profiled candidates placed on it.
//
// Each returns the <svg> element (svg::Document::Render) or "" when it has nothing to draw.
// Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/stats.h"

namespace kernelpro::report {

// ---- speedup over iterations

struct SpeedupChartCandidate {
  int iteration = 0;                     // 1-based
  std::string name;                      // "n3"
  std::string status;                    // "correct", "compile_error", ...
  std::optional<RatioInterval> speedup;  // a correct candidate's, when timed
  bool noisy = false;                    // its timing is noisy (search/best_rule.h)
};
// `iterations`: how many the run did (the x axis); candidates without a speedup are drawn as
// crosses on the 0x line so that every iteration's attempts show.
std::string SpeedupChart(int iterations, const std::vector<SpeedupChartCandidate>& candidates);

// ---- the search tree

struct TreeChartNode {
  int id = 0;          // dense, ROOT first (id 0), a parent before its children
  int parent = -1;     // -1 for ROOT
  std::string label;   // "ROOT", "n3"
  std::string status;  // "reference", "correct", "incorrect", "compile_error", "runtime_error",
                       // "timeout", "llm_error"; any other is drawn grey
  int visits = 0;
  std::string tooltip;  // shown on hover: mode, speedup, strategy
};
// The fill colour of a status, as the tree and its legend draw it.
std::string StatusColour(const std::string& status);
std::string TreeChart(const std::vector<TreeChartNode>& nodes, std::optional<int> best);

// ---- the roofline

struct RooflinePoint {
  std::string label;       // "reference", "n8"
  double intensity = 0;    // FLOP per DRAM byte
  double flops_per_s = 0;  // achieved
  bool reference = false;  // drawn as a square
  bool best = false;       // ringed
  std::string tooltip;
};
struct RooflineChartInput {
  std::string gpu_name;         // "NVIDIA H200 SXM 141GB"
  std::string precision;        // "fp32": whose peak the compute roof is
  double peak_flops = 0;        // FLOP/s
  double dram_bytes_per_s = 0;  // B/s
  std::vector<RooflinePoint> points;
};
// "" when the GPU's peak or bandwidth is unknown or no point has a positive position.
std::string RooflineChart(const RooflineChartInput& input);

// The DRAM bytes (read + written) a profiled kernel moved, from a stored Metrics JSON
// (profile::ToJson: the ncu view's aggregate); none without those counters.
std::optional<double> DramBytesFromMetrics(const Json& metrics);

}  // namespace kernelpro::report
