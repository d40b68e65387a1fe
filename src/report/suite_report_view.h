// The suite report's view model: every fact that SUITE/report/report.md and report.html show,
// computed once from a SuiteReportInput (report/suite_report.h), and the two renderers that only
// format it. Numbers are held as the text both reports print ("1.52x", "83.3%", "0.021"); the
// renderers add the markup (Markdown tables, HTML elements, escaping, links and figures). The
// figures read the few raw numbers they draw (fast_p fractions, speedups) from the same view.
//
//   SuiteReportInput ──BuildSuiteReportView──> SuiteReportView ─┬─ RenderSuiteReportMarkdown
//                                                                └─ RenderSuiteReportHtml
//
// The CSV and JSON forms are for scripts and are written from the input itself (raw numbers).
// The view points at nothing: it may outlive its input. Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/suite_report.h"

namespace kernelpro::report {

// One group's statistics as a row of the tables: a level, the whole suite, or a compared suite.
struct SuiteGroupView {
  std::string label;     // "level 1", "overall", "a: suite-a"
  bool overall = false;  // the whole suite's row (set in bold)
  int level = 0;         // a level's group: its level
  int n = 0;
  std::string correct;                // "10 (83.3%)"
  std::vector<std::string> fast_p;    // per kFastPThresholds: "83.3%"; "-" when unknown
  std::vector<double> fast_p_values;  // the fractions the fast_p figure draws
  std::string geomean;                // failures as 1.0x, uncapped: "1.52x"
  std::string geomean_correct_only;   // "-" when none is correct
  std::string median, min, max;       // "1.30x", "-"
  std::vector<std::string> capped;    // per kCaps: "1.41x"; "-" when unknown
  std::vector<int> band_counts;       // per SuiteReportView::bands
};

// A link from SUITE/report/ to a file of the suite, or the path as text when it may not be one.
struct SuiteLink {
  std::string text;       // "run report", "best kernel"
  std::string path;       // relative to the suite directory
  std::string href;       // relative to the report folder: "../tasks/..."
  bool linkable = false;  // plain characters and no way out of the suite
};

// One problem's row.
struct SuiteProblemView {
  std::string key;  // "level1/19_ReLU"
  int level = 0;
  std::string status;  // "correct", "compile_error", ...
  bool correct = false;
  std::optional<double> speedup;  // the figures' position
  std::string speedup_text;       // "1.50x [1.40, 1.60]", "1.50x", "-"
  bool noisy = false;
  std::string shapes;                   // "shapes: 3/3", "fixed-shape", "" (none checked)
  std::string other_speedup;            // against the other baseline: "1.10x", "-"
  std::string reference_ms, kernel_ms;  // "0.120", "-"
  std::string sol;                      // "83 %" of the speed of light, "-" when unknown
  int count = 0;                        // seeds (optimize) or candidates (eval)
  std::string wall_seconds;             // its tasks' wall time: "160.6", "-" when unknown
  std::string peak_gib;                 // kernelpro's peak device memory: "21.8", "-"
  std::vector<SuiteLink> links;         // its run's report, its best kernel
  std::string message;                  // why it failed, on one line; "" when none
};

// One problem of both suites.
struct SuitePairView {
  std::string key;
  int level = 0;
  std::string a, b;    // each side's score: "1.50x", "1.00x (failed)"
  std::string ratio;   // a/b, "1.20x"
  std::string winner;  // the faster suite's title, or "tie"
  int faster = 0;      // 1: this suite (a), -1: the other (b), 0: a tie
};

// `--compare`: this suite (a) against another (b), problem by problem.
struct SuiteComparisonSection {
  std::string other_title;
  std::string scores;                             // how the pairs are scored
  std::string tally;                              // wins, ties and the geometric mean of the ratios
  std::string wilcoxon;                           // the test as a sentence
  SuiteGroupView a, b;                            // each suite over all its own problems
  std::vector<std::string> only_in_a, only_in_b;  // keys left out of the test
  std::vector<SuitePairView> pairs;
};

struct SuiteReportView {
  std::string title;           // "kernelpro suite: NAME"
  std::string suite;           // NAME, the suite directory's name
  bool optimize = false;       // optimize mode (eval otherwise)
  std::string baseline;        // "eager", "torch.compile"
  std::string other_baseline;  // the baseline of the other_speedup column
  std::string count_header;    // "seeds" or "candidates"
  std::string incomplete;      // SuiteReportInput::incomplete: shown first; "" for a finished suite
  std::vector<std::pair<std::string, std::string>> header;  // label, value
  std::vector<std::string> measurement;                     // how it was measured, one a line
  std::string conventions;                                  // what fast_p and the geomeans mean
  std::vector<SuiteGroupView> groups;  // each level, then the whole suite (overall last)
  std::vector<std::string> bands;      // the speedup bands' labels, as the groups count them
  std::vector<std::string> caps;       // the caps' labels: "2", "5", ...
  std::vector<SuiteProblemView> problems;
  std::optional<SuiteComparisonSection> comparison;
};

SuiteReportView BuildSuiteReportView(const SuiteReportInput& input);
std::string RenderSuiteReportMarkdown(const SuiteReportView& view);
std::string RenderSuiteReportHtml(const SuiteReportView& view);

// ---- Pieces the suite report's files share

// One line of text for a table cell: line breaks and tabs become spaces, long text is cut.
std::string TableCellLine(std::string text, std::size_t max_chars = 160);

}  // namespace kernelpro::report
