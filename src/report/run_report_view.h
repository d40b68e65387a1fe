// The run report's view model: every fact that report.md and report.html show, computed once from
// a RunReportInput (report/run_report.h), and the two renderers that only format it. A fact is
// held as the text both reports print ("1.20x [1.10, 1.30]", "95% interval [1.90, 2.10]"); the
// renderers add the markup (Markdown tables, HTML elements, escaping, links, bars and figures).
// A change to what a report says is made once, in BuildRunReportView; a change to how it looks is
// made in one renderer.
//
//   RunReportInput ──BuildRunReportView──> RunReportView ─┬─ RenderRunReportMarkdown ─> report.md
//                                                          └─ RenderRunReportHtml ────> report.html
//
// The view points at nothing: it may outlive its input. Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.h"
#include "report/charts.h"
#include "report/run_report.h"

namespace kernelpro::report {

// One line of the header: "Device: cuda (NVIDIA H200), driver 570.86.15".
struct HeaderFact {
  std::string label;
  std::string value;
  bool code = false;  // a path, set as code
};

// One node of the search tree as both reports show it.
struct RunNodeView {
  int id = 0;
  int parent = -1;            // -1 for ROOT
  std::vector<int> children;  // in attachment order
  std::string name;           // "ROOT", "n3"
  bool root = false;
  bool correct = false;
  bool terminal = false;
  int iteration = 0;                     // 1-based; 0 for ROOT
  std::string mode;                      // "initial", "debug", "optimize"; "root"
  std::string status;                    // "correct", "compile_error", ...; "reference" for ROOT
  std::string status_text;               // "correct 1.55x [1.45, 1.65]", "compile_error"
  std::optional<RatioInterval> speedup;  // a correct node's, when timed
  std::string speedup_text;              // "1.55x [1.45, 1.65]"; "-" without a speedup
  bool noisy = false;                    // its timing is noisy (search/best_rule.h)
  std::string verdict;                   // "accepted", "not accepted (noisy timing)", ""
  std::string strategy;                  // "" when the orchestrator gave none
  std::string file;                      // its candidate file, run-directory relative; "" if none
  std::vector<std::string> tools_fired;
  std::string reward;       // its own reward, "0.69"
  std::string mean_reward;  // over its subtree, "0.12" (the reports show ROOT's)
  int visits = 0;
  bool has_errors = false;       // the orchestrator recorded errors for it
  std::string first_error_line;  // a failed node's first error line; "" when none
  std::string error_excerpt;     // the head of its errors; "" when none
};

// The best kernel, when the run found a correct one.
struct BestResultView {
  int node = 0;
  std::string name;      // "n5"
  std::string file;      // its candidate file; "" when unknown
  double estimate = 0;   // its speedup's estimate: the scale of the HTML report's bars
  std::string speedup;   // the estimate, "2.00"
  std::string baseline;  // what it is measured against: "the reference"
  std::string interval;  // "95% interval [1.90, 2.10]"
  std::string verdict;   // one sentence: faster than its parent, within the noise, noisy, slower
  bool clearly_faster = false;
  // Its shape generality, one sentence: "Shapes: 3/3 correct ...", "Shapes: fixed-shape ...";
  // "" when no shape variants were checked (eval/shape_check.h).
  std::string shapes;
  std::optional<std::string> energy_choice;  // --energy aware: why it is not the fastest
  std::string roofline;                      // its roofline position, or why it is unknown
  std::string speed_of_light;  // "83 % of the speed of light ...", or why it is unknown
  std::vector<int> lineage;    // ROOT first, the best node last
  std::string best_kernel;  // best.py as written (header and source); "" when the source is unknown
};

// One expansion of the tree: which node it grew from and what its children came to.
struct IterationView {
  int iteration = 0;  // 1-based
  std::string mode;
  int expanded = 0;           // the tree id it grew from
  std::string expanded_name;  // "ROOT", "n1"
  std::string outcome;        // "n1 correct 1.50x [1.40, 1.60] accepted; n2 compile_error"
  std::string tools;          // "n1: memory_coalescing; n2: warp_stall"; "" when none fired
};

// A row of the "Energy" section (`--energy measure|aware`): a correct profiled node's proxy terms
// in pJ, and its reduction over the reference's proxy when that is known.
struct EnergyProxyRow {
  std::string name;                    // "n5"
  std::string speedup;                 // "2.00x [1.90, 2.10]", "-"
  std::optional<std::string> missing;  // no proxy: the counters ncu lacked, "a, b"
  std::string total, dram, uncoalesced, spills, instructions;  // "2.888e+09"; "" without a proxy
  std::string reduction;                                       // "2.31x", "-"
};
struct EnergyProxySection {
  std::string intro;  // the proxy's terms, and the reference's proxy or why it is unknown
  std::vector<EnergyProxyRow> rows;
};

// NVML's measurement after the search (MeasuredEnergyView), cell by cell.
struct MeasuredEnergyCells {
  std::string name;       // "reference", "n7"
  std::string speedup;    // "2.31x [2.26, 2.33]", "-"
  std::string mj;         // median energy per call, "14.97"
  std::string interval;   // "[14.87, 17.09] 95.0%"
  std::string power;      // "231.4 W"
  std::string reduction;  // "2.65x [2.31, 2.67]", "-"
};
struct MeasuredEnergySection {
  std::string method;
  std::vector<MeasuredEnergyCells> rows;
  std::vector<std::string> remarks;
};

struct ToolCallRow {
  int iteration = 0;
  std::string line;  // ToolCallLine
};

// The roofline figure's facts (HTML only): where the run measured, the Stage-1 roofs, and the
// reference and profiled candidates placed on them.
struct RooflineFigureView {
  std::string device;      // "cuda", "cpu": a roofline is a GPU's
  bool has_flops = false;  // a Stage-1 analysis with the problem's FLOPs
  double flops = 0;        // the problem's FLOPs (Stage 1)
  RooflineChartInput chart;
  std::string reference_timing;  // what the reference's point was timed by
  int placed = 0;                // correct candidates on the figure
  int correct = 0;               // correct candidates
};

struct RunReportView {
  std::string title;  // "kernelpro run: swish"
  std::vector<HeaderFact> header;
  std::optional<BestResultView> best;  // none: no kernel shown faster than the reference
  // When correct kernels exist but none is shown faster: why the reference stays the answer
  // (ReferenceStaysText). Empty otherwise.
  std::string reference_stays;
  std::vector<RunNodeView> nodes;  // by tree id, ROOT first
  std::vector<IterationView> iterations;
  std::optional<EnergyProxySection> energy_proxy;        // none without --energy proxies
  std::optional<MeasuredEnergySection> measured_energy;  // none when NVML measured nothing
  std::size_t tool_call_count = 0;                       // all of the programmer's tool calls
  std::vector<ToolCallRow> tool_calls;                   // those shown, in order
  // The count of the calls left out ("... N more"), in both renderings.
  std::size_t tool_calls_over_cap = 0;
  int chart_iterations = 0;  // the speedup figure's x axis
  RooflineFigureView roofline;
  std::vector<std::string> notes;
};

RunReportView BuildRunReportView(const RunReportInput& input);
std::string RenderRunReportMarkdown(const RunReportView& view);
// One page for a browser, offline: inline CSS and SVG (see RenderHtmlReport).
std::string RenderRunReportHtml(const RunReportView& view);

// ---- Pieces the run report's files share

// "ROOT", "n3".
std::string NodeName(int id);
// An energy (pJ or mJ) with four significant digits: "2.888e+09", "18.68".
std::string Energy4(double value);
// Whether a candidate file may be linked from the reports: a run-directory-relative path of plain
// characters, as the run store keeps it ("candidates/0042.py"). Anything else is shown as text,
// never as a link.
bool LinkableRunFile(const std::string& file);
// `text` on one line (line breaks and table pipes become spaces), cut to `max_chars`.
std::string OneLineText(std::string text, std::size_t max_chars = 100);

}  // namespace kernelpro::report
