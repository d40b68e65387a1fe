// What a finished (or stopped) optimisation run hands its user: the best kernel as a standalone
// file with a header that says where and how it was measured, and a report of how the search got
// there (the best lineage with speedups and intervals, the whole tree, the tools that fired at each
// step, the final roofline position), as Markdown and as one self-contained HTML page. Both
// reports render one view model of the run, each fact computed once (report/run_report_view.h),
// so they say the same things.
//
// Pure functions of their input: the same run renders byte-identical text. Safe from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/programmer.h"
#include "core/status.h"
#include "profile/energy_proxy.h"
#include "roofline/reference_analysis.h"
#include "search/orchestrator.h"
#include "search/tree.h"

namespace kernelpro::report {

// Where the measurements were taken; any field may be empty when unknown.
struct RunEnvironment {
  std::string device;       // "cuda" or "cpu"
  std::string device_name;  // "NVIDIA H200"
  std::string driver;       // "570.86.15"
  std::string toolchain;    // "torch 2.11.0, CUDA 13.0"
};

struct RunReportInput {
  search::RunConfig config;
  search::OptimizeSummary summary;
  const search::Tree* tree = nullptr;
  const std::map<int, search::NodeInfo>* nodes = nullptr;
  std::optional<roofline::ReferenceAnalysis> stage1;
  RunEnvironment environment;
  std::string llm;  // "openai:gpt-4o", "replay:PATH"
  // The best kernel's source, shown in both reports as best.py holds it; "" when unknown (then
  // WriteRunFiles fills it from its `best_source`).
  std::string best_source;
  // By tree id: the DRAM bytes a profiled node's kernels moved (ncu; DramBytesFromMetrics of its
  // stored profile), which place it on the report's roofline figure.
  std::map<int, double> dram_bytes;
  // By tree id, `optimize --energy measure|aware` only: the energy proxy of each correct profiled
  // node (StoredEnergyProxies), shown in an "Energy" section with its reduction over the
  // reference's proxy (stage1->energy_proxy_pj) when that is known. Empty: no section.
  std::map<int, profile::EnergyProxyEstimate> energy;
  // Whether the model has a configured price (llm::CostKnown); false: the cost reads "unknown".
  bool cost_known = true;
  // By iteration: the programmer's tool calls (CUTLASS code search, layout probes), in order, as
  // the generate steps stored them. Empty: the section is left out.
  std::map<int, std::vector<agents::ProgrammerToolCall>> tool_calls;
};

// --energy aware: when the best kernel is not the fastest (search/tree.h BestNode: energy decides
// between kernels whose speeds the harness cannot tell apart), the sentence that says so:
// "n1 is the answer rather than the fastest, n2 (2.31x [2.26, 2.33]): their speeds cannot be told
// apart (n1: 2.29x [2.26, 2.31]) and n1's energy proxy is 1.5% lower (--energy aware)."
std::optional<std::string> EnergyChoiceText(const search::Tree& tree);

// NVML's measurement after the search (RunReportInput::summary.energy), as both reports and the
// optimize command show it: per kernel (the reference first) its energy per call with the
// interval, and the kernels' ratio to the reference.
struct MeasuredEnergyRow {
  std::string name;  // "reference", "n7"
  std::optional<RatioInterval> speedup;
  double mj = 0, low = 0, high = 0;        // median energy per call and its interval, mJ
  double confidence = 0;                   // what the interval covers
  double watts = 0;                        // median raw power of its windows
  std::optional<RatioInterval> reduction;  // reference energy / this kernel's (kernels only)
};
struct MeasuredEnergyView {
  std::string method;  // the method line (eval::EnergyMethod)
  std::vector<MeasuredEnergyRow> rows;
  // Sentences for people: whether the two fastest kernels differ beyond the noise, warm-ups cut
  // short, windows at or below idle, an unreadable stored measurement.
  std::vector<std::string> remarks;
};
// Nullopt when nothing was measured.
std::optional<MeasuredEnergyView> ViewMeasuredEnergy(const RunReportInput& in);
// "energy: reference 39.6 mJ per call; n5 14.97 mJ [14.87, 17.09], 2.65x less [2.31, 2.67]" and
// the remarks, one line each (optimize prints them under "best:").
std::vector<std::string> MeasuredEnergyLines(const MeasuredEnergyView& view);

// One line per call for the reports: "search_cutlass /regex/ under 'path' → first result line".
std::string ToolCallLine(const agents::ProgrammerToolCall& call, size_t max_chars = 200);

// The speedup of the best node over its parent's (the reference, 1x, for a seed or a repair), and
// whether the intervals overlap: a best kernel whose interval overlaps its parent's is not shown
// to be faster than it beyond the timing noise.
struct BestVerdict {
  int node = 0;
  RatioInterval speedup;
  int parent = search::Tree::kRootId;
  RatioInterval baseline;       // the parent's interval, or 1x for the reference
  bool clearly_faster = false;  // its interval lies above the baseline's
  bool noisy = false;           // its timing is noisy (core/stats.h): the margin is uncertain
  std::string text;             // for people: faster, within the noise, or slower; noisy or not
};
// The best by the interval rule (search/best_rule.h), judged against its parent; none while the
// reference is the answer. `nodes` (optional) tells of a noisy spread that the interval alone does
// not show.
std::optional<BestVerdict> JudgeBest(const search::Tree& tree,
                                     const std::map<int, search::NodeInfo>* nodes = nullptr);
// When correct kernels exist but none is shown faster than the reference: a clause naming the
// fastest of them and why the reference stays the answer. None otherwise.
std::optional<std::string> ReferenceStaysText(const search::Tree& tree);

// What a run is called: the problem file's stem, or its folder's name for a KernelBench-style
// folder (problems/swish/problem.py → "swish", tests/problems/tiny_swish.py → "tiny_swish").
std::string ProblemName(const std::string& problem);

// The roofline position of the best node when Stage 1 and a timing of it are known (cuda only).
std::optional<roofline::RooflinePosition> BestRooflinePosition(const RunReportInput& input);

// The best kernel's source behind a header of '#' comment lines (device, driver, toolchain,
// speedup with its interval, run directory, lineage).
std::string RenderBestKernel(const RunReportInput& input, const std::string& source);

std::string RenderMarkdownReport(const RunReportInput& input);

// The Markdown report's content as one HTML page for a browser, offline: inline CSS and inline SVG
// figures (report/charts.h: speedup over iterations, the search tree, on a GPU the roofline), no
// scripts, fonts, images or links outside the page (candidate files are linked relative to the
// run directory). Adds what a page shows better: a bar per node with its speedup relative to the
// best, and the head of each failed node's errors in the collapsible search tree. Every text from
// the run (strategies, errors, paths, labels) is HTML-escaped.
std::string RenderHtmlReport(const RunReportInput& input);

// What a run leaves for its user in its run directory (store/run_layout.h): best.py when there is
// a best kernel (`best_source`; an older best.py is removed either way, so it never outlives the
// run that found it), report.md and report.html. Each file is written whole or not at all; the
// first failure is returned and names the file. `out_dir` (not empty) writes them there instead
// (`kernelpro report RUN_DIR --out DIR`); the reports still name the run directory.
Status WriteRunFiles(const RunReportInput& input, const std::optional<std::string>& best_source,
                     const std::string& out_dir = "");

}  // namespace kernelpro::report
