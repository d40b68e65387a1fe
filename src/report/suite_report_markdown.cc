// SUITE/report/report.md: the suite report's view model (report/suite_report_view.h) as Markdown.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.h"
#include "report/suite_report_view.h"

namespace kernelpro::report {
namespace {

using Out = std::ostringstream;

// A table cell: no line breaks, pipes escaped.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : TableCellLine(text)) {
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

std::string MarkdownLink(const SuiteLink& link) {
  if (!link.linkable) return "`" + Cell(link.path) + "`";
  return "[" + link.text + "](" + link.href + ")";
}

void GroupHeader(Out& out, const std::string& first) {
  out << "| " << first << " | n | correct |";
  for (const auto& [p, name] : kFastPThresholds) out << " fast_" << name << " |";
  out << " geomean (failures 1.0x) | geomean (correct only) | median | min | max |\n|---|";
  for (std::size_t i = 0; i < kFastPThresholds.size() + 7; ++i) out << "---:|";
  out << "\n";
}

void GroupRow(Out& out, const SuiteGroupView& g) {
  const std::string b = g.overall ? "**" : "";
  out << "| " << b << Cell(g.label) << b << " | " << g.n << " | " << g.correct << " |";
  for (const std::string& fast_p : g.fast_p) out << " " << fast_p << " |";
  out << " " << g.geomean << " | " << g.geomean_correct_only << " | " << g.median << " | " << g.min
      << " | " << g.max << " |\n";
}

void WriteSuiteHeaderMarkdown(const SuiteReportView& view, Out& out) {
  out << "# " << view.title << "\n\n";
  if (!view.incomplete.empty()) out << "**" << view.incomplete << ".**\n\n";
  for (const auto& [label, value] : view.header) out << "- " << label << ": " << value << "\n";
  out << "\n";
  if (!view.measurement.empty()) {
    out << "Measured:\n\n";
    for (const std::string& line : view.measurement) out << "- " << line << "\n";
    out << "\n";
  }
}

void WriteSummaryMarkdown(const SuiteReportView& view, Out& out) {
  out << "## Summary\n\n";
  GroupHeader(out, "group");
  for (const SuiteGroupView& group : view.groups) GroupRow(out, group);
  out << "\nSpeedups over " << view.baseline << ". " << view.conventions << "\n\n";
}

void WriteBandsAndCapsMarkdown(const SuiteReportView& view, Out& out) {
  if (!view.bands.empty()) {
    out << "## Speedup distribution\n\n| group |";
    for (const std::string& band : view.bands) out << " " << Cell(band) << " |";
    out << "\n|---|";
    for (std::size_t i = 0; i < view.bands.size(); ++i) out << "---:|";
    out << "\n";
    for (const SuiteGroupView& group : view.groups) {
      out << "| " << group.label << " |";
      for (int count : group.band_counts) out << " " << count << " |";
      out << "\n";
    }
    out << "\n";
  }

  out << "## Capping\n\n| group |";
  for (const std::string& cap : view.caps) out << " cap " << cap << "x |";
  out << " uncapped |\n|---|";
  for (std::size_t i = 0; i <= view.caps.size(); ++i) out << "---:|";
  out << "\n";
  for (const SuiteGroupView& group : view.groups) {
    out << "| " << group.label << " |";
    for (const std::string& capped : group.capped) out << " " << capped << " |";
    out << " " << group.geomean << " |\n";
  }
  out << "\nGeometric mean speedup (failures as 1.0x) after clamping every speedup to the cap.\n\n";
}

void WriteProblemsMarkdown(const SuiteReportView& view, Out& out) {
  out << "## Problems\n\n| problem | level | status | speedup [interval] | vs "
      << view.other_baseline << " | " << view.baseline << " (ms) | kernel (ms) | speed of light | "
      << view.count_header << " | wall s | peak GiB | files | why it failed |\n"
      << "|---|---:|---|---:|---:|---:|---:|---:|---:|"
      << "---:|---:|---|---|\n";
  for (const SuiteProblemView& row : view.problems) {
    std::vector<std::string> links;
    for (const SuiteLink& link : row.links) links.push_back(MarkdownLink(link));
    out << "| " << Cell(row.key) << " | " << row.level << " | " << Cell(row.status)
        << (row.shapes.empty() ? "" : " (" + row.shapes + ")") << " | " << row.speedup_text
        << (row.noisy ? " noisy" : "") << " | " << row.other_speedup << " | " << row.reference_ms
        << " | " << row.kernel_ms << " | " << row.sol << " | " << row.count << " | "
        << row.wall_seconds << " | " << row.peak_gib << " | " << Join(links, ", ") << " | "
        << MarkdownCode(row.message) << " |\n";
  }
  out << "\n";
}

void WriteComparisonMarkdown(const SuiteReportView& view, Out& out) {
  const SuiteComparisonSection& c = *view.comparison;
  out << "## Comparison with " << c.other_title << "\n\n" << c.scores << "\n\n";
  GroupHeader(out, "suite (overall)");
  GroupRow(out, c.a);
  GroupRow(out, c.b);
  out << "\n" << c.tally << "\n\n" << c.wilcoxon << "\n\n";
  if (!c.only_in_a.empty()) {
    out << "Only in " << view.suite << " (left out): " << Join(c.only_in_a, ", ") << "\n\n";
  }
  if (!c.only_in_b.empty()) {
    out << "Only in " << c.other_title << " (left out): " << Join(c.only_in_b, ", ") << "\n\n";
  }
  out << "| problem | level | a: " << Cell(view.suite) << " | b: " << Cell(c.other_title)
      << " | ratio a/b | faster |\n|---|---:|---:|---:|---:|---|\n";
  for (const SuitePairView& pair : c.pairs) {
    out << "| " << Cell(pair.key) << " | " << pair.level << " | " << pair.a << " | " << pair.b
        << " | " << pair.ratio << " | " << Cell(pair.winner) << " |\n";
  }
  out << "\n";
}

}  // namespace

std::string RenderSuiteReportMarkdown(const SuiteReportView& view) {
  Out out;
  WriteSuiteHeaderMarkdown(view, out);
  WriteSummaryMarkdown(view, out);
  WriteBandsAndCapsMarkdown(view, out);
  WriteProblemsMarkdown(view, out);
  if (view.comparison) WriteComparisonMarkdown(view, out);
  return out.str();
}

}  // namespace kernelpro::report
