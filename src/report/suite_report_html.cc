// SUITE/report/report.html: the suite report's view model (report/suite_report_view.h) as one
// offline page, with inline CSS and the fast_p curve and the speedup distribution as inline SVG.
#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text.h"
#include "report/charts.h"
#include "report/suite_report_view.h"
#include "report/svg.h"

namespace kernelpro::report {
namespace {

using Out = std::ostringstream;

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

std::string FastPChart(const SuiteReportView& view) {
  const double width = 720, height = 320;
  const svg::Frame frame{64, 16, width - 64 - 250, height - 16 - 52};
  const svg::Scale x = svg::Scale::Linear(0, kCurveEnd, frame.left, frame.right());
  const svg::Scale y = svg::Scale::Linear(0, 100, frame.bottom(), frame.top);
  svg::Document doc(width, height, "fast_p: share of problems correct and faster than p");
  svg::DrawAxes(doc, frame, x, y, svg::NiceTicks(0, kCurveEnd, 6), svg::NiceTicks(0, 100),
                "threshold p (speedup over " + view.baseline + ")",
                "problems correct with speedup > p (%)");
  // The six thresholds the tables report, as faint guides.
  for (const auto& [p, name] : kFastPThresholds) {
    doc.Line(x(p), frame.top, x(p), frame.bottom(),
             svg::Style{"none", "#afb8c1", 1, "2 3", 1, "threshold"});
  }

  struct Curve {
    std::string label;
    std::string colour;
    const SuiteGroupView* group;
    std::vector<double> speedups;  // of the correct problems
    int n = 0;                     // all problems of the group
    double stroke = 2;
  };
  std::vector<Curve> curves;
  int index = 0;
  for (const SuiteGroupView& group : view.groups) {
    if (group.overall) continue;
    Curve c{group.label, GroupColour(index++), &group, {}, 0, 2};
    for (const SuiteProblemView& row : view.problems) {
      if (row.level != group.level) continue;
      ++c.n;
      if (row.correct && row.speedup) c.speedups.push_back(*row.speedup);
    }
    curves.push_back(std::move(c));
  }
  Curve overall{"overall", kOverallColour, &view.groups.back(), {}, 0, 3};
  for (const SuiteProblemView& row : view.problems) {
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
    const SuiteGroupView& g = *c.group;
    for (size_t i = 0; i < kFastPThresholds.size() && i < g.fast_p_values.size(); ++i) {
      const auto& [p, name] = kFastPThresholds[i];
      doc.Circle(x(p), y(100 * g.fast_p_values[i]), 3.5,
                 svg::Style{c.colour, "#ffffff", 1, "", 1, "threshold-point"},
                 c.label + ": fast_" + name + " = " + g.fast_p[i]);
    }
    doc.EndGroup();
    legend.push_back({svg::Style{c.colour, "", 1, "", 1, "swatch"},
                      c.label + " (n = " + std::to_string(g.n) + ")"});
  }

  if (view.comparison) {
    const SuiteGroupView& other = view.comparison->b;
    const std::string& other_title = view.comparison->other_title;
    std::vector<std::pair<double, double>> line;
    for (size_t i = 0; i < kFastPThresholds.size() && i < other.fast_p_values.size(); ++i) {
      line.push_back({x(kFastPThresholds[i].first), y(100 * other.fast_p_values[i])});
    }
    doc.BeginGroup("fastp-compare");
    if (!line.empty()) {
      doc.Polyline(line, svg::Style{"none", "#59636e", 2, "6 4", 1, "curve compared"});
    }
    for (size_t i = 0; i < line.size(); ++i) {
      doc.Circle(
          line[i].first, line[i].second, 3.5,
          svg::Style{"#ffffff", "#59636e", 1.5, "", 1, "threshold-point compared"},
          other_title + " overall: fast_" + kFastPThresholds[i].second + " = " + other.fast_p[i]);
    }
    doc.EndGroup();
    legend.push_back({svg::Style{"#ffffff", "#59636e", 1.5, "", 1, "swatch"},
                      other_title + " overall (dashed)"});
  }
  svg::DrawLegend(doc, frame.right() + 16, frame.top + 12, legend);
  return doc.Render();
}

// The speedups per level on a log axis, a dot per correct problem (hover for its key), and the
// failures counted in a column of their own to the left of the axis.
std::string DistributionChart(const SuiteReportView& view) {
  struct Row {
    std::string label;
    std::string colour;
    std::vector<const SuiteProblemView*> problems;
  };
  std::vector<Row> rows;
  int index = 0;
  for (const SuiteGroupView& group : view.groups) {
    if (group.overall) continue;
    Row r{group.label, GroupColour(index++), {}};
    for (const SuiteProblemView& p : view.problems) {
      if (p.level == group.level) r.problems.push_back(&p);
    }
    rows.push_back(std::move(r));
  }
  Row all{"overall", kOverallColour, {}};
  for (const SuiteProblemView& p : view.problems) all.problems.push_back(&p);
  rows.push_back(std::move(all));

  double lo = 1, hi = 1;
  for (const SuiteProblemView& p : view.problems) {
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
  svg::DrawAxes(doc, frame, x, y, ticks, {}, "speedup over " + view.baseline + " (log axis)", "");
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
    for (const SuiteProblemView* p : row.problems) {
      if (p->correct && p->speedup && *p->speedup > 0) {
        // Three lanes, so that problems of equal speed stay visible side by side.
        const double lane = (drawn++ % 3 - 1) * 9;
        doc.Circle(x(*p->speedup), mid + lane, 4,
                   svg::Style{row.colour, "#ffffff", 1, "", 0.85, "problem correct"},
                   p->key + ": " + p->speedup_text);
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

// ---- The page

std::string HtmlText(std::string_view text) { return svg::Escape(text); }

constexpr const char* kSuiteHtmlStyle = R"(
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
std::string SuiteHtmlStatus(const SuiteProblemView& row) {
  const bool grey =
      row.status == "llm_error" || row.status == "no_candidate" || row.status == "pending";
  const char* cls = row.correct ? "ok" : grey ? "muted" : "fail";
  return std::string("<span class=\"") + cls + "\">" + HtmlText(row.status) + "</span>";
}

std::string HtmlLink(const SuiteLink& link) {
  if (!link.linkable) return "<code>" + HtmlText(link.path) + "</code>";
  return "<a href=\"" + HtmlText(link.href) + "\">" + HtmlText(link.text) + "</a>";
}

void HtmlGroupHeader(Out& out, const std::string& first) {
  out << "<tr><th>" << first << "</th><th>n</th><th>correct</th>";
  for (const auto& [p, name] : kFastPThresholds) out << "<th>fast_" << name << "</th>";
  out << "<th>geomean (failures 1.0x)</th><th>geomean (correct only)</th><th>median</th>"
      << "<th>min</th><th>max</th></tr>\n";
}

void HtmlGroupRow(Out& out, const SuiteGroupView& g) {
  out << "<tr" << (g.overall ? " class=\"overall\"" : "") << "><td>" << HtmlText(g.label)
      << "</td><td class=\"num\">" << g.n << "</td><td class=\"num\">" << g.correct << "</td>";
  for (const std::string& fast_p : g.fast_p) out << "<td class=\"num\">" << fast_p << "</td>";
  out << "<td class=\"num\">" << g.geomean << "</td><td class=\"num\">" << g.geomean_correct_only
      << "</td><td class=\"num\">" << g.median << "</td><td class=\"num\">" << g.min
      << "</td><td class=\"num\">" << g.max << "</td></tr>\n";
}

// The opening of a row of a per-group table: "<tr class="overall"><td>overall</td>".
std::string HtmlGroupRowStart(const SuiteGroupView& g) {
  return std::string("<tr") + (g.overall ? " class=\"overall\"" : "") + "><td>" +
         HtmlText(g.label) + "</td>";
}

void WriteSuiteHead(const SuiteReportView& view, Out& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << HtmlText(view.title) << "</title>\n<style>" << kSuiteHtmlStyle << "</style>\n"
      << "</head>\n<body>\n";
  out << "<h1>" << HtmlText(view.title) << "</h1>\n";
  if (!view.incomplete.empty())
    out << "<p><strong>" << HtmlText(view.incomplete) << ".</strong></p>\n";
  out << "<table class=\"facts\">\n";
  for (const auto& [label, value] : view.header) {
    out << "<tr><th>" << HtmlText(label) << "</th><td>" << HtmlText(value) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (!view.measurement.empty()) {
    out << "<ul class=\"measurement\">\n";
    for (const std::string& line : view.measurement) out << "<li>" << HtmlText(line) << "</li>\n";
    out << "</ul>\n";
  }
}

void WriteSummary(const SuiteReportView& view, Out& out) {
  out << "<h2>Summary</h2>\n<table>\n";
  HtmlGroupHeader(out, "group");
  for (const SuiteGroupView& group : view.groups) HtmlGroupRow(out, group);
  out << "<caption>Speedups over " << HtmlText(view.baseline) << ". " << HtmlText(view.conventions)
      << "</caption>\n</table>\n";
}

void WriteSuiteFigures(const SuiteReportView& view, Out& out) {
  out << "<h2>Figures</h2>\n";
  out << "<figure>\n"
      << FastPChart(view) << "<figcaption>fast_p against the threshold p: the "
      << "share of all problems whose kernel is correct and more than p times as fast as "
      << HtmlText(view.baseline)
      << ", a step curve from the problems' speedups (up to p = " << svg::Num(kCurveEnd)
      << "); the points are the six thresholds of the table";
  if (view.comparison) {
    out << "; dashed, " << HtmlText(view.comparison->other_title)
        << " overall at the same thresholds";
  }
  out << ".</figcaption>\n</figure>\n";
  out << "<figure>\n"
      << DistributionChart(view) << "<figcaption>Every problem's speedup over "
      << HtmlText(view.baseline)
      << " on a log axis, a row per level and one for the whole suite; the "
      << "dashed line is 1x. Problems without a correct kernel are the crosses in the "
      << "<em>failed</em> column, coloured by their status; hover a mark for its problem."
      << "</figcaption>\n</figure>\n";
}

void WriteBandsAndCaps(const SuiteReportView& view, Out& out) {
  if (!view.bands.empty()) {
    out << "<h2>Speedup distribution</h2>\n<table>\n<tr><th>group</th>";
    for (const std::string& band : view.bands) out << "<th>" << HtmlText(band) << "</th>";
    out << "</tr>\n";
    for (const SuiteGroupView& group : view.groups) {
      out << HtmlGroupRowStart(group);
      for (int count : group.band_counts) out << "<td class=\"num\">" << count << "</td>";
      out << "</tr>\n";
    }
    out << "<caption>Problems per speedup band; a band holds its lower bound, not its upper."
        << "</caption>\n</table>\n";
  }

  out << "<h2>Capping</h2>\n<table>\n<tr><th>group</th>";
  for (const std::string& cap : view.caps) out << "<th>cap " << cap << "x</th>";
  out << "<th>uncapped</th></tr>\n";
  for (const SuiteGroupView& group : view.groups) {
    out << HtmlGroupRowStart(group);
    for (const std::string& capped : group.capped) out << "<td class=\"num\">" << capped << "</td>";
    out << "<td class=\"num\">" << group.geomean << "</td></tr>\n";
  }
  out << "<caption>Geometric mean speedup (failures as 1.0x) after clamping every speedup to "
      << "the cap: where the columns differ, a few outliers carry the mean.</caption>\n</table>\n";
}

void WriteProblems(const SuiteReportView& view, Out& out) {
  out << "<h2>Problems</h2>\n<table>\n<tr><th>problem</th><th>level</th><th>status</th>"
      << "<th>speedup [interval]</th><th>vs " << HtmlText(view.other_baseline) << "</th><th>"
      << HtmlText(view.baseline) << " (ms)</th><th>kernel (ms)</th><th>speed of light</th><th>"
      << view.count_header << "</th><th>wall s</th><th>peak GiB</th><th>files</th><th>why it "
      << "failed</th></tr>\n";
  for (const SuiteProblemView& row : view.problems) {
    out << "<tr><td>" << HtmlText(row.key) << "</td><td class=\"num\">" << row.level << "</td><td>"
        << SuiteHtmlStatus(row)
        << (row.shapes.empty() ? "" : " <span class=\"muted\">" + HtmlText(row.shapes) + "</span>")
        << "</td><td class=\"num\">" << row.speedup_text
        << (row.noisy ? " <span class=\"noisy\">noisy</span>" : "") << "</td><td class=\"num\">"
        << row.other_speedup << "</td><td class=\"num\">" << row.reference_ms
        << "</td><td class=\"num\">" << row.kernel_ms << "</td><td class=\"num\">" << row.sol
        << "</td><td class=\"num\">" << row.count << "</td><td class=\"num\">" << row.wall_seconds
        << "</td><td class=\"num\">" << row.peak_gib << "</td><td class=\"files\">";
    std::vector<std::string> links;
    for (const SuiteLink& link : row.links) links.push_back(HtmlLink(link));
    out << Join(links, " · ") << "</td><td class=\"why muted\">" << HtmlText(row.message)
        << "</td></tr>\n";
  }
  out << "<caption>The speedup is the ratio of median times over " << HtmlText(view.baseline)
      << " with its interval; <em>speed of light</em>: the fastest time the problem's work can "
      << "take at the peaks of the machine it was timed on, over the kernel's median "
      << "(docs/harness.md, Trust); <em>noisy</em>: the timing's interval or spread is too wide to "
      << "trust (rerun on a quieter machine); <em>wall s</em>: the time its tasks took; "
      << "<em>peak GiB</em>: the most device memory kernelpro's processes held together while "
      << "evaluating it (eval suites on a GPU).";
  if (view.optimize) out << " Each row is the best of the problem's seeds.";
  out << "</caption>\n</table>\n";
}

void WriteComparison(const SuiteReportView& view, Out& out) {
  const SuiteComparisonSection& c = *view.comparison;
  out << "<h2>Comparison with " << HtmlText(c.other_title) << "</h2>\n";
  out << "<p>" << HtmlText(c.scores) << "</p>\n";
  out << "<table>\n";
  HtmlGroupHeader(out, "suite (overall)");
  HtmlGroupRow(out, c.a);
  HtmlGroupRow(out, c.b);
  out << "<caption>Each suite over all its own problems, uncapped.</caption>\n</table>\n";
  out << "<p>" << HtmlText(c.tally) << "</p>\n";
  out << "<p class=\"verdict\">" << HtmlText(c.wilcoxon) << "</p>\n";
  if (!c.only_in_a.empty() || !c.only_in_b.empty()) {
    out << "<p class=\"muted\">Not paired, left out of the test: ";
    if (!c.only_in_a.empty()) {
      out << "only in " << HtmlText(view.suite) << ": " << HtmlText(Join(c.only_in_a, ", "));
    }
    if (!c.only_in_a.empty() && !c.only_in_b.empty()) out << "; ";
    if (!c.only_in_b.empty()) {
      out << "only in " << HtmlText(c.other_title) << ": " << HtmlText(Join(c.only_in_b, ", "));
    }
    out << ".</p>\n";
  }
  out << "<table>\n<tr><th>problem</th><th>level</th><th>a: " << HtmlText(view.suite)
      << "</th><th>b: " << HtmlText(c.other_title)
      << "</th><th>ratio a/b</th><th>faster</th></tr>\n";
  for (const SuitePairView& pair : c.pairs) {
    out << "<tr><td>" << HtmlText(pair.key) << "</td><td class=\"num\">" << pair.level
        << "</td><td class=\"num\">" << pair.a << "</td><td class=\"num\">" << pair.b
        << "</td><td class=\"num\">" << pair.ratio << "</td><td"
        << (pair.faster > 0   ? " class=\"ok\""
            : pair.faster < 0 ? " class=\"fail\""
                              : "")
        << ">" << HtmlText(pair.winner) << "</td></tr>\n";
  }
  out << "</table>\n";
}

}  // namespace

std::string RenderSuiteReportHtml(const SuiteReportView& view) {
  Out out;
  WriteSuiteHead(view, out);
  WriteSummary(view, out);
  WriteSuiteFigures(view, out);
  WriteBandsAndCaps(view, out);
  WriteProblems(view, out);
  if (view.comparison) WriteComparison(view, out);
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace kernelpro::report
