#include "report/suite_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text.h"
#include "report/charts.h"
#include "report/svg.h"

namespace kernelpro::report {
namespace {

// The report files sit in SUITE/report/, and the rows' paths are relative to SUITE: a link climbs
// one folder first.
constexpr const char* kReportToSuite = "../";

// ---- Numbers, one way everywhere

std::string Speedup(double value) { return FormatFixed(value) + "x"; }

std::string Speedup(const std::optional<double>& value) {
  return value ? Speedup(*value) : std::string("-");
}

// A rate as people read it: "83.3%".
std::string Percent(double fraction) { return FormatFixed(100 * fraction, 1) + "%"; }

std::string Millis(const std::optional<double>& ms) {
  return ms ? FormatFixed(*ms, 3) : std::string("-");
}

// "1.50x [1.40, 1.60]", "1.50x" without an interval, "-" without a speedup.
std::string SpeedupWithInterval(const SuiteProblemRow& row) {
  if (!row.speedup) return "-";
  std::string text = Speedup(*row.speedup);
  if (row.speedup_low && row.speedup_high) {
    text += " [" + FormatFixed(*row.speedup_low) + ", " + FormatFixed(*row.speedup_high) + "]";
  }
  return text;
}

// A p-value with three decimals, or its order of magnitude when smaller: "0.021", "2.4e-05".
std::string PValue(double p) {
  if (p >= 0.001) return FormatFixed(p, 3);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1e", p);
  return buffer;
}

// A number for scripts (CSV): six significant digits, no locale.
std::string Plain(const std::optional<double>& value) {
  if (!value) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", *value);
  return buffer;
}

// fast_p of `group` at threshold index `i`, "-" when the statistics lack it.
std::string FastP(const GroupStats& group, size_t i) {
  return i < group.fast_p.size() ? Percent(group.fast_p[i]) : std::string("-");
}

std::string CappedGeomean(const GroupStats& group, size_t i) {
  return i < group.capped_geomean.size() ? Speedup(group.capped_geomean[i]) : std::string("-");
}

std::string CapLabel(double cap) { return svg::Num(cap); }

std::string LevelLabel(int level) {
  return level > 0 ? "level " + std::to_string(level) : std::string("no level");
}

// The baseline the `other_speedup` column is against.
std::string OtherBaseline(const std::string& baseline) {
  return baseline == "torch.compile" ? "eager" : "torch.compile";
}

// What the per-problem table counts: seeds (optimize) or candidates (eval).
std::string CountHeader(const SuiteReportInput& in) {
  return in.mode == "optimize" ? "seeds" : "candidates";
}

int CountOf(const SuiteReportInput& in, const SuiteProblemRow& row) {
  return in.mode == "optimize" ? row.seeds : row.candidates;
}

// The groups of the summary: each level, then the whole suite.
std::vector<std::pair<std::string, const GroupStats*>> Groups(const SuiteStats& stats) {
  std::vector<std::pair<std::string, const GroupStats*>> groups;
  for (const auto& [level, group] : stats.levels) groups.push_back({LevelLabel(level), &group});
  groups.push_back({"overall", &stats.overall});
  return groups;
}

// Whether a suite-relative path may be linked: plain characters, no way out of the suite.
bool Linkable(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find("..") != std::string::npos) return false;
  for (char c : path) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '_' && c != '-' && c != '.' && c != '/') return false;
  }
  return true;
}

// One line of text for a table cell: line breaks become spaces, long text is cut.
std::string OneLine(std::string text, size_t max_chars = 160) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return ShortenText(std::move(text), max_chars);
}

// The sentences of a comparison, shared by HTML and Markdown (plain text; escaped by the caller).
std::string ScoresSentence(const SuiteReportInput& in) {
  const SuiteComparisonView& view = *in.comparison;
  std::string text = "a = " + in.title + " (this suite), b = " + view.other_title;
  if (!view.other_dir.empty()) text += " (" + view.other_dir + ")";
  text += ". Problems are paired by key; each side's score is its speedup over " + in.baseline +
          " with a failure counted as 1.00x";
  if (view.comparison.cap) text += ", capped at " + Speedup(*view.comparison.cap);
  return text + ".";
}

std::string TallySentence(const SuiteReportInput& in) {
  const SuiteComparisonView& view = *in.comparison;
  const Comparison& c = view.comparison;
  return std::to_string(c.pairs.size()) + " paired problems: " + in.title + " faster on " +
         std::to_string(c.a_wins) + ", " + view.other_title + " faster on " +
         std::to_string(c.b_wins) + ", " + std::to_string(c.ties) +
         (c.ties == 1 ? " tie" : " ties") +
         ". Geometric mean of the ratios a/b: " + Speedup(c.geomean_ratio) + ".";
}

std::string WilcoxonSentence(const SuiteReportInput& in) {
  const WilcoxonResult& w = in.comparison->comparison.wilcoxon;
  std::string text = "One-sided Wilcoxon signed-rank test on ln(a) - ln(b) (H1: " + in.title +
                     " is faster), n = " + std::to_string(w.n) + " non-zero pairs (" +
                     std::to_string(w.zeros) + (w.zeros == 1 ? " tie" : " ties") + " dropped): ";
  if (w.n == 0) return text + "no test (p = 1).";
  text += "W+ = " + svg::Num(w.statistic) + ", p = " + PValue(w.p_value);
  if (w.exact) {
    text += " (exact)";
  } else {
    text += " (normal approximation with continuity correction";
    if (w.z) text += ", z = " + FormatFixed(*w.z);
    text += ")";
  }
  return text + ".";
}

std::string Winner(const SuiteReportInput& in, const PairedProblem& pair) {
  if (pair.log_ratio > 0) return in.title;
  if (pair.log_ratio < 0) return in.comparison->other_title;
  return "tie";
}

// A paired score: "1.50x", "1.00x (failed)".
std::string PairedScore(double score, bool correct) {
  return Speedup(score) + (correct ? "" : " (failed)");
}

const char* kConventions =
    "fast_p: the share of all problems whose kernel is correct and faster than p times the "
    "baseline (speedup > p); fast_0 is the correct rate. Geomean (failures 1.0x): the geometric "
    "mean speedup with every unsolved problem counted as 1.00x (it keeps the reference); geomean "
    "(correct only): over the correct problems alone (KernelBench's convention); median with "
    "failures as 1.00x; min and max over the correct problems.";

// ---- Figures

const std::vector<std::string>& LevelColours() {
  static const std::vector<std::string> colours = {"#0969da", "#bf3989", "#bc4c00",
                                                   "#1a7f37", "#8250df", "#0a3069"};
  return colours;
}
constexpr const char* kOverallColour = "#1f2328";

std::string GroupColour(int index) { return LevelColours()[index % LevelColours().size()]; }

// The fast_p curve: for every threshold p from 0 to kCurveEnd the share of problems that are
// correct with speedup > p, a step curve from the rows' speedups; the six thresholds as points
// (the statistics' own values); with a comparison the other suite's overall at the thresholds,
// dashed (its per-problem speedups are not at hand).
constexpr double kCurveEnd = 3;

std::string FastPChart(const SuiteReportInput& in) {
  const double width = 720, height = 320;
  const svg::Frame frame{64, 16, width - 64 - 250, height - 16 - 52};
  const svg::Scale x = svg::Scale::Linear(0, kCurveEnd, frame.left, frame.right());
  const svg::Scale y = svg::Scale::Linear(0, 100, frame.bottom(), frame.top);
  svg::Document doc(width, height, "fast_p: share of problems correct and faster than p");
  svg::DrawAxes(doc, frame, x, y, svg::NiceTicks(0, kCurveEnd, 6), svg::NiceTicks(0, 100),
                "threshold p (speedup over " + in.baseline + ")",
                "problems correct with speedup > p (%)");
  // The six thresholds the tables report, as faint guides.
  for (const auto& [p, name] : kFastPThresholds) {
    doc.Line(x(p), frame.top, x(p), frame.bottom(),
             svg::Style{"none", "#afb8c1", 1, "2 3", 1, "threshold"});
  }

  struct Curve {
    std::string label;
    std::string colour;
    const GroupStats* stats;
    std::vector<double> speedups;  // of the correct problems
    int n = 0;                     // all problems of the group
    double stroke = 2;
  };
  std::vector<Curve> curves;
  int index = 0;
  for (const auto& [level, group] : in.stats.levels) {
    Curve c{LevelLabel(level), GroupColour(index++), &group, {}, 0, 2};
    for (const SuiteProblemRow& row : in.rows) {
      if (row.level != level) continue;
      ++c.n;
      if (row.correct && row.speedup) c.speedups.push_back(*row.speedup);
    }
    curves.push_back(std::move(c));
  }
  Curve overall{"overall", kOverallColour, &in.stats.overall, {}, 0, 3};
  for (const SuiteProblemRow& row : in.rows) {
    ++overall.n;
    if (row.correct && row.speedup) overall.speedups.push_back(*row.speedup);
  }
  curves.push_back(std::move(overall));

  std::vector<svg::LegendEntry> legend;
  for (Curve& c : curves) {
    std::sort(c.speedups.begin(), c.speedups.end());
    const double n = std::max(c.n, 1);
    auto share = [&](double p) {  // percent of the group correct with speedup > p
      return 100.0 *
             (c.speedups.end() - std::upper_bound(c.speedups.begin(), c.speedups.end(), p)) / n;
    };
    std::vector<std::pair<double, double>> line = {{x(0), y(share(0))}};
    for (double s : c.speedups) {
      if (s <= 0 || s >= kCurveEnd) continue;
      line.push_back({x(s), line.back().second});
      line.push_back({x(s), y(share(s))});
    }
    line.push_back({x(kCurveEnd), y(share(kCurveEnd))});
    doc.BeginGroup("fastp-curve");
    doc.Polyline(line, svg::Style{"none", c.colour, c.stroke, "", 1, "curve"});
    for (size_t i = 0; i < kFastPThresholds.size() && i < c.stats->fast_p.size(); ++i) {
      const auto& [p, name] = kFastPThresholds[i];
      doc.Circle(x(p), y(100 * c.stats->fast_p[i]), 3.5,
                 svg::Style{c.colour, "#ffffff", 1, "", 1, "threshold-point"},
                 c.label + ": fast_" + name + " = " + Percent(c.stats->fast_p[i]));
    }
    doc.EndGroup();
    legend.push_back({svg::Style{c.colour, "", 1, "", 1, "swatch"},
                      c.label + " (n = " + std::to_string(c.stats->n) + ")"});
  }

  if (in.comparison) {
    const GroupStats& other = in.comparison->other_stats.overall;
    std::vector<std::pair<double, double>> line;
    for (size_t i = 0; i < kFastPThresholds.size() && i < other.fast_p.size(); ++i) {
      line.push_back({x(kFastPThresholds[i].first), y(100 * other.fast_p[i])});
    }
    doc.BeginGroup("fastp-compare");
    if (!line.empty()) {
      doc.Polyline(line, svg::Style{"none", "#59636e", 2, "6 4", 1, "curve compared"});
    }
    for (size_t i = 0; i < line.size(); ++i) {
      doc.Circle(line[i].first, line[i].second, 3.5,
                 svg::Style{"#ffffff", "#59636e", 1.5, "", 1, "threshold-point compared"},
                 in.comparison->other_title + " overall: fast_" + kFastPThresholds[i].second +
                     " = " + Percent(other.fast_p[i]));
    }
    doc.EndGroup();
    legend.push_back({svg::Style{"#ffffff", "#59636e", 1.5, "", 1, "swatch"},
                      in.comparison->other_title + " overall (dashed)"});
  }
  svg::DrawLegend(doc, frame.right() + 16, frame.top + 12, legend);
  return doc.Render();
}

// The speedups per level on a log axis, a dot per correct problem (hover for its key), and the
// failures counted in a column of their own to the left of the axis.
std::string DistributionChart(const SuiteReportInput& in) {
  struct Row {
    std::string label;
    std::string colour;
    std::vector<const SuiteProblemRow*> problems;
  };
  std::vector<Row> rows;
  int index = 0;
  for (const auto& [level, group] : in.stats.levels) {
    Row r{LevelLabel(level), GroupColour(index++), {}};
    for (const SuiteProblemRow& p : in.rows) {
      if (p.level == level) r.problems.push_back(&p);
    }
    rows.push_back(std::move(r));
  }
  Row all{"overall", kOverallColour, {}};
  for (const SuiteProblemRow& p : in.rows) all.problems.push_back(&p);
  rows.push_back(std::move(all));

  double lo = 1, hi = 1;
  for (const SuiteProblemRow& p : in.rows) {
    if (p.correct && p.speedup && *p.speedup > 0) {
      lo = std::min(lo, *p.speedup);
      hi = std::max(hi, *p.speedup);
    }
  }
  svg::DecadeDomain(lo, hi);
  if (lo == hi) hi = lo * 10;

  const double row_height = 44, failed_width = 90;
  const double width = 720, height = 16 + rows.size() * row_height + 52;
  const svg::Frame frame{110 + failed_width, 16, width - 110 - failed_width - 24,
                         rows.size() * row_height};
  const svg::Scale x = svg::Scale::Log(lo, hi, frame.left, frame.right());
  const svg::Scale y =
      svg::Scale::Linear(0, static_cast<double>(rows.size()), frame.top, frame.bottom());
  svg::Document doc(width, height, "Speedup of every problem, per level, on a log axis");
  // 1-2-5 ticks in each decade: a suite's speedups seldom span more than two.
  std::vector<double> ticks;
  for (double decade : svg::DecadeTicks(lo, hi)) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (decade * m <= hi * (1 + 1e-9)) ticks.push_back(decade * m);
    }
  }
  svg::DrawAxes(doc, frame, x, y, ticks, {}, "speedup over " + in.baseline + " (log axis)", "");
  doc.Line(x(1), frame.top, x(1), frame.bottom(),
           svg::Style{"none", "#59636e", 1, "5 4", 1, "baseline-line"});

  svg::TextStyle label;
  label.anchor = svg::Anchor::kEnd;
  svg::TextStyle failed_label;
  failed_label.size = 11;
  failed_label.fill = "#59636e";
  failed_label.anchor = svg::Anchor::kMiddle;
  doc.Text(frame.left - failed_width / 2, frame.bottom() + 20, "failed", failed_label);
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const double mid = y(r + 0.5);
    if (r > 0) {
      doc.Line(frame.left - failed_width, y(r), frame.right(), y(r),
               svg::Style{"none", "#eaeef2", 1, "", 1, "row-rule"});
    }
    doc.Text(frame.left - failed_width - 8, mid + 4, row.label, label);
    doc.BeginGroup("distribution-row");
    int failed = 0, drawn = 0;
    for (const SuiteProblemRow* p : row.problems) {
      if (p->correct && p->speedup && *p->speedup > 0) {
        // Three lanes, so that problems of equal speed stay visible side by side.
        const double lane = (drawn++ % 3 - 1) * 9;
        doc.Circle(x(*p->speedup), mid + lane, 4,
                   svg::Style{row.colour, "#ffffff", 1, "", 0.85, "problem correct"},
                   p->key + ": " + SpeedupWithInterval(*p));
      } else {
        const double px = frame.left - failed_width + 14 + (failed % 8) * 8;
        const double py = mid + (failed / 8 % 3 - 1) * 9;
        const std::string colour = StatusColour(p->status);
        doc.Polyline({{px - 3, py - 3}, {px + 3, py + 3}},
                     svg::Style{"none", colour, 2, "", 1, "problem failed"});
        doc.Polyline({{px - 3, py + 3}, {px + 3, py - 3}},
                     svg::Style{"none", colour, 2, "", 1, "problem failed"}, false,
                     p->key + ": " + p->status);
        ++failed;
      }
    }
    doc.EndGroup();
  }
  return doc.Render();
}

// ---- HTML

std::string Html(std::string_view text) { return svg::Escape(text); }

constexpr const char* kHtmlStyle = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
       background: #fff; max-width: 100em; margin: 1.5em auto; padding: 0 1.5em; }
h1 { font-size: 1.6em; margin-bottom: .4em; }
h2 { font-size: 1.3em; margin-top: 1.6em; border-bottom: 1px solid #d1d9e0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
table { border-collapse: collapse; margin: .5em 0 1em; }
caption { caption-side: bottom; text-align: left; color: #59636e; font-size: 13px;
          padding-top: .3em; max-width: 60em; }
th, td { border: 1px solid #d1d9e0; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
table.facts th { white-space: nowrap; }
td.num { white-space: nowrap; text-align: right; }
td.files { white-space: nowrap; }
td.why { min-width: 12em; font-size: 13px; }
tr.overall td { font-weight: 600; }
ul.measurement { margin: .3em 0 1em; padding-left: 1.2em; color: #59636e; }
.ok { color: #1a7f37; }
.fail { color: #cf222e; }
.muted { color: #59636e; }
.noisy { color: #9a6700; }
.verdict { padding: .5em .8em; border-left: 4px solid #0969da; background: #f6f8fa; }
figure { margin: 1em 0 1.5em; }
figcaption { color: #59636e; font-size: 13px; margin-top: .3em; max-width: 60em; }
)";

// A row status as the run report colours it: correct green, a kernel's failure red, and grey
// where no kernel failed (the LLM gave none, nothing to evaluate, not run yet).
std::string HtmlStatus(const SuiteProblemRow& row) {
  const bool grey =
      row.status == "llm_error" || row.status == "no_candidate" || row.status == "pending";
  const char* cls = row.correct ? "ok" : grey ? "muted" : "fail";
  return std::string("<span class=\"") + cls + "\">" + Html(row.status) + "</span>";
}

std::string HtmlLink(const std::string& path, const std::string& text) {
  if (path.empty()) return "";
  if (!Linkable(path)) return "<code>" + Html(path) + "</code>";
  return "<a href=\"" + Html(kReportToSuite + path) + "\">" + Html(text) + "</a>";
}

void HtmlGroupHeader(std::ostringstream& out, const std::string& first) {
  out << "<tr><th>" << first << "</th><th>n</th><th>correct</th>";
  for (const auto& [p, name] : kFastPThresholds) out << "<th>fast_" << name << "</th>";
  out << "<th>geomean (failures 1.0x)</th><th>geomean (correct only)</th><th>median</th>"
      << "<th>min</th><th>max</th></tr>\n";
}

void HtmlGroupRow(std::ostringstream& out, const std::string& label, const GroupStats& g,
                  bool overall) {
  out << "<tr" << (overall ? " class=\"overall\"" : "") << "><td>" << Html(label)
      << "</td><td class=\"num\">" << g.n << "</td><td class=\"num\">" << g.correct << " ("
      << Percent(g.correct_rate) << ")</td>";
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    out << "<td class=\"num\">" << FastP(g, i) << "</td>";
  }
  out << "<td class=\"num\">" << Speedup(g.geomean_speedup) << "</td><td class=\"num\">"
      << Speedup(g.geomean_speedup_correct_only) << "</td><td class=\"num\">"
      << Speedup(g.median_speedup) << "</td><td class=\"num\">" << Speedup(g.min_speedup)
      << "</td><td class=\"num\">" << Speedup(g.max_speedup) << "</td></tr>\n";
}

// The facts at the top, one per line, shared by HTML and Markdown.
std::vector<std::pair<std::string, std::string>> HeaderFacts(const SuiteReportInput& in) {
  std::vector<std::pair<std::string, std::string>> facts;
  facts.push_back({"Mode", in.mode == "optimize"
                               ? "optimize (a kernelpro run per problem; the best of its seeds)"
                               : "eval (the given candidates; the best correct one per problem)"});
  facts.push_back({"Baseline", in.baseline + ": every speedup is its time over the kernel's"});
  const GroupStats& o = in.stats.overall;
  facts.push_back({"Problems", std::to_string(o.n) + ", " + std::to_string(o.correct) +
                                   " correct (" + Percent(o.correct_rate) + ")"});
  if (in.comparison) facts.push_back({"Compared with", in.comparison->other_title});
  return facts;
}

std::vector<std::string> BandLabels(const SuiteStats& stats) {
  std::vector<std::string> labels;
  auto add = [&](const GroupStats& g) {
    for (const SpeedupBand& band : g.distribution) {
      if (std::find(labels.begin(), labels.end(), band.label) == labels.end()) {
        labels.push_back(band.label);
      }
    }
  };
  add(stats.overall);
  for (const auto& [level, group] : stats.levels) add(group);
  return labels;
}

int BandCount(const GroupStats& g, const std::string& label) {
  for (const SpeedupBand& band : g.distribution) {
    if (band.label == label) return band.count;
  }
  return 0;
}

void HtmlComparison(const SuiteReportInput& in, std::ostringstream& out) {
  const SuiteComparisonView& view = *in.comparison;
  const Comparison& c = view.comparison;
  out << "<h2>Comparison with " << Html(view.other_title) << "</h2>\n";
  out << "<p>" << Html(ScoresSentence(in)) << "</p>\n";
  out << "<table>\n";
  HtmlGroupHeader(out, "suite (overall)");
  HtmlGroupRow(out, "a: " + in.title, in.stats.overall, false);
  HtmlGroupRow(out, "b: " + view.other_title, view.other_stats.overall, false);
  out << "<caption>Each suite over all its own problems, uncapped.</caption>\n</table>\n";
  out << "<p>" << Html(TallySentence(in)) << "</p>\n";
  out << "<p class=\"verdict\">" << Html(WilcoxonSentence(in)) << "</p>\n";
  if (!c.only_in_a.empty() || !c.only_in_b.empty()) {
    out << "<p class=\"muted\">Not paired, left out of the test: ";
    if (!c.only_in_a.empty()) {
      out << "only in " << Html(in.title) << ": " << Html(Join(c.only_in_a, ", "));
    }
    if (!c.only_in_a.empty() && !c.only_in_b.empty()) out << "; ";
    if (!c.only_in_b.empty()) {
      out << "only in " << Html(view.other_title) << ": " << Html(Join(c.only_in_b, ", "));
    }
    out << ".</p>\n";
  }
  out << "<table>\n<tr><th>problem</th><th>level</th><th>a: " << Html(in.title)
      << "</th><th>b: " << Html(view.other_title)
      << "</th><th>ratio a/b</th><th>faster</th></tr>\n";
  for (const PairedProblem& pair : c.pairs) {
    const std::string winner = Winner(in, pair);
    out << "<tr><td>" << Html(pair.key) << "</td><td class=\"num\">" << pair.level
        << "</td><td class=\"num\">" << PairedScore(pair.a, pair.a_correct)
        << "</td><td class=\"num\">" << PairedScore(pair.b, pair.b_correct)
        << "</td><td class=\"num\">" << Speedup(std::exp(pair.log_ratio)) << "</td><td"
        << (pair.log_ratio > 0   ? " class=\"ok\""
            : pair.log_ratio < 0 ? " class=\"fail\""
                                 : "")
        << ">" << Html(winner) << "</td></tr>\n";
  }
  out << "</table>\n";
}

// ---- Markdown

// A table cell: no line breaks, pipes escaped.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : OneLine(text)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Run text (a compiler's message) as a code span, so that "<float, 4>" is not read as HTML;
// backticks inside become quotes. "" stays empty.
std::string MarkdownCode(const std::string& text) {
  if (text.empty()) return "";
  std::string code = Cell(text);
  std::replace(code.begin(), code.end(), '`', '\'');
  return "`" + code + "`";
}

std::string MarkdownLink(const std::string& path, const std::string& text) {
  if (path.empty()) return "";
  if (!Linkable(path)) return "`" + Cell(path) + "`";
  return "[" + text + "](" + kReportToSuite + path + ")";
}

void MarkdownGroupHeader(std::ostringstream& out, const std::string& first) {
  out << "| " << first << " | n | correct |";
  for (const auto& [p, name] : kFastPThresholds) out << " fast_" << name << " |";
  out << " geomean (failures 1.0x) | geomean (correct only) | median | min | max |\n|---|";
  for (size_t i = 0; i < kFastPThresholds.size() + 7; ++i) out << "---:|";
  out << "\n";
}

void MarkdownGroupRow(std::ostringstream& out, const std::string& label, const GroupStats& g,
                      bool overall) {
  const std::string b = overall ? "**" : "";
  out << "| " << b << Cell(label) << b << " | " << g.n << " | " << g.correct << " ("
      << Percent(g.correct_rate) << ") |";
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) out << " " << FastP(g, i) << " |";
  out << " " << Speedup(g.geomean_speedup) << " | " << Speedup(g.geomean_speedup_correct_only)
      << " | " << Speedup(g.median_speedup) << " | " << Speedup(g.min_speedup) << " | "
      << Speedup(g.max_speedup) << " |\n";
}

// ---- CSV

// RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string RenderSuiteHtml(const SuiteReportInput& in) {
  std::ostringstream out;
  const std::string title = "kernelpro suite: " + in.title;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << Html(title) << "</title>\n<style>" << kHtmlStyle << "</style>\n"
      << "</head>\n<body>\n";
  out << "<h1>" << Html(title) << "</h1>\n<table class=\"facts\">\n";
  for (const auto& [label, value] : HeaderFacts(in)) {
    out << "<tr><th>" << Html(label) << "</th><td>" << Html(value) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (!in.measurement.empty()) {
    out << "<ul class=\"measurement\">\n";
    for (const std::string& line : in.measurement) out << "<li>" << Html(line) << "</li>\n";
    out << "</ul>\n";
  }

  out << "<h2>Summary</h2>\n<table>\n";
  HtmlGroupHeader(out, "group");
  for (const auto& [label, group] : Groups(in.stats)) {
    HtmlGroupRow(out, label, *group, group == &in.stats.overall);
  }
  out << "<caption>Speedups over " << Html(in.baseline) << ". " << Html(kConventions)
      << "</caption>\n</table>\n";

  out << "<h2>Figures</h2>\n";
  out << "<figure>\n"
      << FastPChart(in) << "<figcaption>fast_p against the threshold p: the "
      << "share of all problems whose kernel is correct and more than p times as fast as "
      << Html(in.baseline)
      << ", a step curve from the problems' speedups (up to p = " << svg::Num(kCurveEnd)
      << "); the points are the six thresholds of the table";
  if (in.comparison) {
    out << "; dashed, " << Html(in.comparison->other_title) << " overall at the same thresholds";
  }
  out << ".</figcaption>\n</figure>\n";
  out << "<figure>\n"
      << DistributionChart(in) << "<figcaption>Every problem's speedup over " << Html(in.baseline)
      << " on a log axis, a row per level and one for the whole suite; the "
      << "dashed line is 1x. Problems without a correct kernel are the crosses in the "
      << "<em>failed</em> column, coloured by their status; hover a mark for its problem."
      << "</figcaption>\n</figure>\n";

  const std::vector<std::string> bands = BandLabels(in.stats);
  if (!bands.empty()) {
    out << "<h2>Speedup distribution</h2>\n<table>\n<tr><th>group</th>";
    for (const std::string& band : bands) out << "<th>" << Html(band) << "</th>";
    out << "</tr>\n";
    for (const auto& [label, group] : Groups(in.stats)) {
      out << "<tr" << (group == &in.stats.overall ? " class=\"overall\"" : "") << "><td>"
          << Html(label) << "</td>";
      for (const std::string& band : bands) {
        out << "<td class=\"num\">" << BandCount(*group, band) << "</td>";
      }
      out << "</tr>\n";
    }
    out << "<caption>Problems per speedup band; a band holds its lower bound, not its upper."
        << "</caption>\n</table>\n";
  }

  out << "<h2>Capping</h2>\n<table>\n<tr><th>group</th>";
  for (double cap : kCaps) out << "<th>cap " << CapLabel(cap) << "x</th>";
  out << "<th>uncapped</th></tr>\n";
  for (const auto& [label, group] : Groups(in.stats)) {
    out << "<tr" << (group == &in.stats.overall ? " class=\"overall\"" : "") << "><td>"
        << Html(label) << "</td>";
    for (size_t i = 0; i < kCaps.size(); ++i) {
      out << "<td class=\"num\">" << CappedGeomean(*group, i) << "</td>";
    }
    out << "<td class=\"num\">" << Speedup(group->geomean_speedup) << "</td></tr>\n";
  }
  out << "<caption>Geometric mean speedup (failures as 1.0x) after clamping every speedup to "
      << "the cap: where the columns differ, a few outliers carry the mean.</caption>\n</table>\n";

  out << "<h2>Problems</h2>\n<table>\n<tr><th>problem</th><th>level</th><th>status</th>"
      << "<th>speedup [interval]</th><th>vs " << Html(OtherBaseline(in.baseline)) << "</th><th>"
      << Html(in.baseline) << " (ms)</th><th>kernel (ms)</th><th>" << CountHeader(in)
      << "</th><th>files</th><th>why it failed</th></tr>\n";
  for (const SuiteProblemRow& row : in.rows) {
    out << "<tr><td>" << Html(row.key) << "</td><td class=\"num\">" << row.level << "</td><td>"
        << HtmlStatus(row) << "</td><td class=\"num\">" << SpeedupWithInterval(row)
        << (row.noisy ? " <span class=\"noisy\">noisy</span>" : "") << "</td><td class=\"num\">"
        << Speedup(row.other_speedup) << "</td><td class=\"num\">" << Millis(row.reference_ms)
        << "</td><td class=\"num\">" << Millis(row.kernel_ms) << "</td><td class=\"num\">"
        << CountOf(in, row) << "</td><td class=\"files\">";
    std::vector<std::string> links;
    if (!row.run_report.empty()) links.push_back(HtmlLink(row.run_report, "run report"));
    if (!row.best.empty()) links.push_back(HtmlLink(row.best, "best kernel"));
    out << Join(links, " · ") << "</td><td class=\"why muted\">" << Html(OneLine(row.message))
        << "</td></tr>\n";
  }
  out << "<caption>The speedup is the ratio of median times over " << Html(in.baseline)
      << " with its interval; <em>noisy</em>: the timing's interval or spread is too wide to "
      << "trust (rerun on a quieter machine).";
  if (in.mode == "optimize") out << " Each row is the best of the problem's seeds.";
  out << "</caption>\n</table>\n";

  if (in.comparison) HtmlComparison(in, out);
  out << "</body>\n</html>\n";
  return out.str();
}

std::string RenderSuiteMarkdown(const SuiteReportInput& in) {
  std::ostringstream out;
  out << "# kernelpro suite: " << in.title << "\n\n";
  for (const auto& [label, value] : HeaderFacts(in)) out << "- " << label << ": " << value << "\n";
  out << "\n";
  if (!in.measurement.empty()) {
    out << "Measured:\n\n";
    for (const std::string& line : in.measurement) out << "- " << line << "\n";
    out << "\n";
  }

  out << "## Summary\n\n";
  MarkdownGroupHeader(out, "group");
  for (const auto& [label, group] : Groups(in.stats)) {
    MarkdownGroupRow(out, label, *group, group == &in.stats.overall);
  }
  out << "\nSpeedups over " << in.baseline << ". " << kConventions << "\n\n";

  const std::vector<std::string> bands = BandLabels(in.stats);
  if (!bands.empty()) {
    out << "## Speedup distribution\n\n| group |";
    for (const std::string& band : bands) out << " " << Cell(band) << " |";
    out << "\n|---|";
    for (size_t i = 0; i < bands.size(); ++i) out << "---:|";
    out << "\n";
    for (const auto& [label, group] : Groups(in.stats)) {
      out << "| " << label << " |";
      for (const std::string& band : bands) out << " " << BandCount(*group, band) << " |";
      out << "\n";
    }
    out << "\n";
  }

  out << "## Capping\n\n| group |";
  for (double cap : kCaps) out << " cap " << CapLabel(cap) << "x |";
  out << " uncapped |\n|---|";
  for (size_t i = 0; i <= kCaps.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& [label, group] : Groups(in.stats)) {
    out << "| " << label << " |";
    for (size_t i = 0; i < kCaps.size(); ++i) out << " " << CappedGeomean(*group, i) << " |";
    out << " " << Speedup(group->geomean_speedup) << " |\n";
  }
  out << "\nGeometric mean speedup (failures as 1.0x) after clamping every speedup to the cap.\n\n";

  out << "## Problems\n\n| problem | level | status | speedup [interval] | vs "
      << OtherBaseline(in.baseline) << " | " << in.baseline << " (ms) | kernel (ms) | "
      << CountHeader(in) << " | files | why it failed |\n"
      << "|---|---:|---|---:|---:|---:|---:|---:|---|---|\n";
  for (const SuiteProblemRow& row : in.rows) {
    std::vector<std::string> links;
    if (!row.run_report.empty()) links.push_back(MarkdownLink(row.run_report, "run report"));
    if (!row.best.empty()) links.push_back(MarkdownLink(row.best, "best kernel"));
    out << "| " << Cell(row.key) << " | " << row.level << " | " << Cell(row.status) << " | "
        << SpeedupWithInterval(row) << (row.noisy ? " noisy" : "") << " | "
        << Speedup(row.other_speedup) << " | " << Millis(row.reference_ms) << " | "
        << Millis(row.kernel_ms) << " | " << CountOf(in, row) << " | " << Join(links, ", ") << " | "
        << MarkdownCode(row.message) << " |\n";
  }
  out << "\n";

  if (in.comparison) {
    const SuiteComparisonView& view = *in.comparison;
    const Comparison& c = view.comparison;
    out << "## Comparison with " << view.other_title << "\n\n" << ScoresSentence(in) << "\n\n";
    MarkdownGroupHeader(out, "suite (overall)");
    MarkdownGroupRow(out, "a: " + in.title, in.stats.overall, false);
    MarkdownGroupRow(out, "b: " + view.other_title, view.other_stats.overall, false);
    out << "\n" << TallySentence(in) << "\n\n" << WilcoxonSentence(in) << "\n\n";
    if (!c.only_in_a.empty()) {
      out << "Only in " << in.title << " (left out): " << Join(c.only_in_a, ", ") << "\n\n";
    }
    if (!c.only_in_b.empty()) {
      out << "Only in " << view.other_title << " (left out): " << Join(c.only_in_b, ", ") << "\n\n";
    }
    out << "| problem | level | a: " << Cell(in.title) << " | b: " << Cell(view.other_title)
        << " | ratio a/b | faster |\n|---|---:|---:|---:|---:|---|\n";
    for (const PairedProblem& pair : c.pairs) {
      out << "| " << Cell(pair.key) << " | " << pair.level << " | "
          << PairedScore(pair.a, pair.a_correct) << " | " << PairedScore(pair.b, pair.b_correct)
          << " | " << Speedup(std::exp(pair.log_ratio)) << " | " << Cell(Winner(in, pair))
          << " |\n";
    }
    out << "\n";
  }
  return out.str();
}

std::string RenderSuiteCsv(const SuiteReportInput& in) {
  std::ostringstream out;
  out << "key,level,status,correct,speedup,speedup_low,speedup_high,other_speedup,reference_ms,"
         "kernel_ms,noisy,seeds,candidates,best,run_report,message\n";
  for (const SuiteProblemRow& row : in.rows) {
    const std::vector<std::string> fields = {
        row.key,
        std::to_string(row.level),
        row.status,
        row.correct ? "true" : "false",
        Plain(row.speedup),
        Plain(row.speedup_low),
        Plain(row.speedup_high),
        Plain(row.other_speedup),
        Plain(row.reference_ms),
        Plain(row.kernel_ms),
        row.noisy ? "true" : "false",
        std::to_string(row.seeds),
        std::to_string(row.candidates),
        row.best,
        row.run_report,
        row.message,
    };
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << CsvField(fields[i]);
    out << "\n";
  }
  return out.str();
}

Json GroupStatsJson(const GroupStats& g) {
  Json fast_p = Json::object();
  for (size_t i = 0; i < kFastPThresholds.size() && i < g.fast_p.size(); ++i) {
    fast_p[kFastPThresholds[i].second] = g.fast_p[i];
  }
  Json capped = Json::object();
  for (size_t i = 0; i < kCaps.size() && i < g.capped_geomean.size(); ++i) {
    capped[CapLabel(kCaps[i])] = g.capped_geomean[i];
  }
  Json distribution = Json::object();
  for (const SpeedupBand& band : g.distribution) distribution[band.label] = band.count;
  return Json{{"n", g.n},
              {"correct", g.correct},
              {"correct_rate", g.correct_rate},
              {"fast_p", fast_p},
              {"geomean_speedup", g.geomean_speedup},
              {"geomean_speedup_correct_only", NumberOrNull(g.geomean_speedup_correct_only)},
              {"median_speedup", g.median_speedup},
              {"min_speedup", NumberOrNull(g.min_speedup)},
              {"max_speedup", NumberOrNull(g.max_speedup)},
              {"capped_geomean", capped},
              {"distribution", distribution}};
}

Json SuiteReportJson(const SuiteReportInput& in) {
  Json levels = Json::object();
  for (const auto& [level, group] : in.stats.levels) {
    levels[std::to_string(level)] = GroupStatsJson(group);
  }
  Json problems = Json::array();
  for (const SuiteProblemRow& row : in.rows) {
    problems.push_back(Json{{"key", row.key},
                            {"name", row.name},
                            {"level", row.level},
                            {"status", row.status},
                            {"correct", row.correct},
                            {"speedup", NumberOrNull(row.speedup)},
                            {"speedup_low", NumberOrNull(row.speedup_low)},
                            {"speedup_high", NumberOrNull(row.speedup_high)},
                            {"other_speedup", NumberOrNull(row.other_speedup)},
                            {"reference_ms", NumberOrNull(row.reference_ms)},
                            {"kernel_ms", NumberOrNull(row.kernel_ms)},
                            {"noisy", row.noisy},
                            {"seeds", row.seeds},
                            {"candidates", row.candidates},
                            {"best", row.best},
                            {"run_report", row.run_report},
                            {"message", row.message}});
  }
  Json report{{"title", in.title},
              {"mode", in.mode},
              {"baseline", in.baseline},
              {"measurement", in.measurement},
              {"overall", GroupStatsJson(in.stats.overall)},
              {"levels", levels},
              {"problems", problems}};
  if (in.comparison) {
    const Comparison& c = in.comparison->comparison;
    Json pairs = Json::array();
    for (const PairedProblem& pair : c.pairs) {
      pairs.push_back(Json{{"key", pair.key},
                           {"level", pair.level},
                           {"a", pair.a},
                           {"b", pair.b},
                           {"a_correct", pair.a_correct},
                           {"b_correct", pair.b_correct},
                           {"log_ratio", pair.log_ratio}});
    }
    report["compare"] = Json{{"other", in.comparison->other_title},
                             {"other_overall", GroupStatsJson(in.comparison->other_stats.overall)},
                             {"pairs", pairs},
                             {"a_wins", c.a_wins},
                             {"b_wins", c.b_wins},
                             {"ties", c.ties},
                             {"geomean_ratio", c.geomean_ratio},
                             {"cap", NumberOrNull(c.cap)}};
    const WilcoxonResult& w = c.wilcoxon;
    report["wilcoxon"] = Json{{"n", w.n},
                              {"statistic", w.statistic},
                              {"p_value", w.p_value},
                              {"exact", w.exact},
                              {"zeros", w.zeros},
                              {"pairs", w.pairs},
                              {"z", NumberOrNull(w.z)},
                              {"alternative", "greater"}};
  }
  return report;
}

}  // namespace kernelpro::report
