// What `kernelpro suite report` hands a researcher: a suite's results as one self-contained HTML
// page (inline CSS and SVG, no scripts, fonts or network: the fast_p curve, the speedup
// distribution per level, the per-problem table with a link to each run's own report, and with
// --compare the ablation view), and the same facts as Markdown, CSV (one row per problem) and
// JSON (the statistics, keys fixed for scripts: see SuiteReportJson). The HTML page and the
// Markdown render one view model of the suite, each fact computed once
// (report/suite_report_view.h).
//
// Every number carries how it was measured: the `measurement` lines (GPU, driver, clocks as
// found, timing method, trials) are printed with the tables, and the statistics' conventions
// (failures as 1.0x, correct-only, best of seeds) are stated where the numbers are.
//
// Pure functions of their input: the same input renders byte-identical text. Safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "report/suite_stats.h"

namespace kernelpro::report {

// One problem's row.
struct SuiteProblemRow {
  std::string key;   // "level1/19_ReLU"
  std::string name;  // "19_ReLU"
  int level = 0;     // 0: no levels
  // "correct", or the best outcome's failure: "incorrect", "compile_error", "runtime_error",
  // "timeout", "llm_error", "no_candidate", "error" (the task itself failed), "pending"
  std::string status;
  bool correct = false;
  // Against the suite's baseline (`SuiteReportInput::baseline`), when correct and timed.
  std::optional<double> speedup, speedup_low, speedup_high;
  // The other baseline's speedup when known (vs torch.compile when the baseline is eager, and
  // vs eager when it is torch.compile).
  std::optional<double> other_speedup;
  std::optional<double> reference_ms, kernel_ms;  // medians
  // The kernel's time against the speed of light (eval/speed_of_light.h), when its evaluation made
  // a bound.
  std::optional<double> sol_fraction;
  bool noisy = false;  // its timing is noisy (core/stats.h): shown, flagged
  // The scored kernel's shape generality (eval/shape_check.h ShapeGeneralityText): "shapes: 3/3",
  // "fixed-shape", or "" when no shape variants were checked.
  std::string shapes;
  int seeds = 0;           // optimize: runs of this problem (best of them is the row)
  int candidates = 0;      // eval: candidates evaluated
  std::string best;        // the best kernel's file, relative to the suite directory
  std::string run_report;  // optimize: the run's report.html, relative to the suite directory
  std::string message;     // why it failed, one line
  // What its finished tasks cost (suite/task_costs.h): their wall time, summed over its seeds in
  // optimize mode, and the largest device memory kernelpro's processes held together in any of
  // them (eval mode; unknown on CPU, for optimize runs and for results made before it was kept).
  std::optional<double> seconds;
  std::optional<long long> peak_device_bytes;
};

struct SuiteComparisonView {
  std::string other_title;  // the compared suite's title (its directory's name)
  std::string other_dir;
  SuiteStats other_stats;
  Comparison comparison;  // this suite = a, the other = b
  // What the comparison must say before its numbers (suite::ComparisonCaveats): a side whose
  // correctness criterion is unrecorded, timing methods that differ.
  std::vector<std::string> caveats;
};

struct SuiteReportInput {
  std::string title;  // the suite directory's name
  std::string mode;   // "eval" or "optimize"
  // "eager" or "torch.compile": what every speedup in `rows` and `stats` is against.
  std::string baseline = "eager";
  std::vector<SuiteProblemRow> rows;
  SuiteStats stats;
  // How the numbers were measured, one fact a line: "GPU: NVIDIA H200 (driver 570.86.15)",
  // "clocks as found: SM 1980 MHz, memory 3201 MHz (not locked)", "timing: CUDA events ...",
  // "trials: 100 timed calls per side in 10 interleaved rounds", "per problem: best of 3 seeds".
  std::vector<std::string> measurement;
  // The correctness criteria (eval_options.h: CorrectnessCriterion; "unrecorded" for results
  // made before they were named) and timing methods of its results, each once.
  std::vector<std::string> criteria;
  std::vector<std::string> timing_methods;
  // The suite's tasks by state. `incomplete` ("unfinished: 8 of 11 tasks have a result (...); the
  // statistics cover ...") is "" when every task has a result; reports show it first. Problems
  // with a task pending or damaged are rows without a score and count in no statistic.
  int tasks_total = 0, tasks_finished = 0, tasks_pending = 0, tasks_damaged = 0;
  std::string incomplete;
  std::optional<SuiteComparisonView> comparison;
};

std::string RenderSuiteHtml(const SuiteReportInput& input);
std::string RenderSuiteMarkdown(const SuiteReportInput& input);

// Every rendering `kernelpro suite report` writes, from one view of the input.
struct SuiteReportTexts {
  std::string html, markdown, csv;
  Json json;  // SuiteReportJson
};
SuiteReportTexts RenderSuiteReports(const SuiteReportInput& input);
// Header then one row per problem: key,level,status,correct,speedup,speedup_low,speedup_high,
// other_speedup,reference_ms,kernel_ms,sol_fraction,noisy,seeds,candidates,best,run_report,message,
// seconds,peak_device_bytes (RFC 4180 quoting; empty cells for unknown values). The last two are
// last so that a script reading columns by position finds the others where they were.
std::string RenderSuiteCsv(const SuiteReportInput& input);

// The statistics for scripts:
//   {"title", "mode", "baseline", "measurement": [...],
//    "overall": GroupJson, "levels": {"1": GroupJson, ...},
//    "problems": [{key, level, status, correct, speedup, ...}],
//    with a comparison: "compare": {"other": title, "other_overall": GroupJson, "pairs": [...],
//                                   "a_wins", "b_wins", "ties", "geomean_ratio", "cap"},
//                       "wilcoxon": {"n", "statistic", "p_value", "exact", "zeros", "pairs",
//                                    "z", "alternative": "greater"}}
// GroupJson: {"n", "correct", "correct_rate", "fast_p": {"0": f, "0.5": f, "0.8": f, "1.0": f,
// "1.5": f, "2.0": f}, "geomean_speedup", "geomean_speedup_correct_only" (null when none is
// correct), "median_speedup", "min_speedup", "max_speedup", "capped_geomean": {"2": g, ...},
// "distribution": {"failed": k, ...}}.
Json SuiteReportJson(const SuiteReportInput& input);
Json GroupStatsJson(const GroupStats& stats);

}  // namespace kernelpro::report
