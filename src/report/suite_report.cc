// The suite report's view (report/suite_report_view.h), built once from the input, and the forms
// for scripts (CSV, JSON), written from the input itself. The Markdown and HTML renderers are
// suite_report_markdown.cc and suite_report_html.cc.
#include "report/suite_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "core/text.h"
#include "report/suite_report_view.h"
#include "report/svg.h"

namespace kernelpro::report {
namespace {

// The report files sit in SUITE/report/, and the rows' paths are relative to SUITE: a link climbs
// one folder first.
constexpr const char* kReportToSuite = "../";

// ---- Numbers, one way everywhere

std::string SuiteSpeedup(double value) { return FormatFixed(value) + "x"; }

std::string Speedup(const std::optional<double>& value) {
  return value ? SuiteSpeedup(*value) : std::string("-");
}

// A rate as people read it: "83.3%".
std::string Percent(double fraction) { return FormatFixed(100 * fraction, 1) + "%"; }

std::string Millis(const std::optional<double>& ms) {
  return ms ? FormatFixed(*ms, 3) : std::string("-");
}

// "1.50x [1.40, 1.60]", "1.50x" without an interval, "-" without a speedup.
std::string SpeedupWithInterval(const SuiteProblemRow& row) {
  if (!row.speedup) return "-";
  std::string text = SuiteSpeedup(*row.speedup);
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

// A wall time in seconds, "160.6"; a size in GiB, "21.8"; "-" when unknown.
std::string WallSeconds(const std::optional<double>& seconds) {
  return seconds ? FormatFixed(*seconds, 1) : std::string("-");
}

std::string Gib(const std::optional<long long>& bytes) {
  return bytes ? FormatGib(*bytes, 1) : std::string("-");
}

std::string CapLabel(double cap) { return svg::Num(cap); }

std::string LevelLabel(int level) {
  return level > 0 ? "level " + std::to_string(level) : std::string("no level");
}

// The baseline the `other_speedup` column is against.
std::string OtherBaseline(const std::string& baseline) {
  return baseline == "torch.compile" ? "eager" : "torch.compile";
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

// The sentences of a comparison (plain text; the HTML renderer escapes them).
std::string ScoresSentence(const SuiteReportInput& in) {
  const SuiteComparisonView& view = *in.comparison;
  std::string text = "a = " + in.title + " (this suite), b = " + view.other_title;
  if (!view.other_dir.empty()) text += " (" + view.other_dir + ")";
  text += ". Problems are paired by key; each side's score is its speedup over " + in.baseline +
          " with a failure counted as 1.00x";
  if (view.comparison.cap) text += ", capped at " + SuiteSpeedup(*view.comparison.cap);
  text += ".";
  for (const std::string& caveat : view.caveats) text += " Caution: " + caveat + ".";
  return text;
}

std::string TallySentence(const SuiteReportInput& in) {
  const SuiteComparisonView& view = *in.comparison;
  const Comparison& c = view.comparison;
  return std::to_string(c.pairs.size()) + " paired problems: " + in.title + " faster on " +
         std::to_string(c.a_wins) + ", " + view.other_title + " faster on " +
         std::to_string(c.b_wins) + ", " + std::to_string(c.ties) +
         (c.ties == 1 ? " tie" : " ties") +
         ". Geometric mean of the ratios a/b: " + SuiteSpeedup(c.geomean_ratio) + ".";
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
  return SuiteSpeedup(score) + (correct ? "" : " (failed)");
}

const char* kConventions =
    "fast_p: the share of all problems whose kernel is correct and faster than p times the "
    "baseline (speedup > p); fast_0 is the correct rate. Geomean (failures 1.0x): the geometric "
    "mean speedup with every unsolved problem counted as 1.00x (it keeps the reference); geomean "
    "(correct only): over the correct problems alone (KernelBench's convention); median with "
    "failures as 1.00x; min and max over the correct problems.";

// The facts at the top, one per line, shared by HTML and Markdown.
std::vector<std::pair<std::string, std::string>> SuiteHeaderFacts(const SuiteReportInput& in) {
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

// A group's row: its statistics as the tables print them.
SuiteGroupView GroupView(const std::string& label, const GroupStats& g, bool overall,
                         const std::vector<std::string>& bands) {
  SuiteGroupView v;
  v.label = label;
  v.overall = overall;
  v.n = g.n;
  v.correct = std::to_string(g.correct) + " (" + Percent(g.correct_rate) + ")";
  for (std::size_t i = 0; i < kFastPThresholds.size(); ++i) {
    v.fast_p.push_back(i < g.fast_p.size() ? Percent(g.fast_p[i]) : std::string("-"));
  }
  v.fast_p_values = g.fast_p;
  v.geomean = SuiteSpeedup(g.geomean_speedup);
  v.geomean_correct_only = Speedup(g.geomean_speedup_correct_only);
  v.median = SuiteSpeedup(g.median_speedup);
  v.min = Speedup(g.min_speedup);
  v.max = Speedup(g.max_speedup);
  for (std::size_t i = 0; i < kCaps.size(); ++i) {
    v.capped.push_back(i < g.capped_geomean.size() ? SuiteSpeedup(g.capped_geomean[i])
                                                   : std::string("-"));
  }
  for (const std::string& band : bands) v.band_counts.push_back(BandCount(g, band));
  return v;
}

SuiteProblemView ProblemView(const SuiteReportInput& in, const SuiteProblemRow& row) {
  SuiteProblemView v;
  v.key = row.key;
  v.level = row.level;
  v.status = row.status;
  v.correct = row.correct;
  v.speedup = row.speedup;
  v.speedup_text = SpeedupWithInterval(row);
  v.noisy = row.noisy;
  v.shapes = row.shapes;
  v.other_speedup = Speedup(row.other_speedup);
  v.reference_ms = Millis(row.reference_ms);
  v.kernel_ms = Millis(row.kernel_ms);
  v.sol = row.sol_fraction ? FormatFixed(100 * *row.sol_fraction, 0) + " %" : "-";
  v.count = in.mode == "optimize" ? row.seeds : row.candidates;
  v.wall_seconds = WallSeconds(row.seconds);
  v.peak_gib = Gib(row.peak_device_bytes);
  auto link = [&](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    v.links.push_back({text, path, kReportToSuite + path, Linkable(path)});
  };
  link(row.run_report, "run report");
  link(row.best, "best kernel");
  v.message = TableCellLine(row.message);
  return v;
}

SuiteComparisonSection ComparisonOf(const SuiteReportInput& in) {
  const SuiteComparisonView& view = *in.comparison;
  const Comparison& c = view.comparison;
  SuiteComparisonSection s;
  s.other_title = view.other_title;
  s.scores = ScoresSentence(in);
  s.tally = TallySentence(in);
  s.wilcoxon = WilcoxonSentence(in);
  s.a = GroupView("a: " + in.title, in.stats.overall, false, {});
  s.b = GroupView("b: " + view.other_title, view.other_stats.overall, false, {});
  s.only_in_a = c.only_in_a;
  s.only_in_b = c.only_in_b;
  for (const PairedProblem& pair : c.pairs) {
    s.pairs.push_back({pair.key, pair.level, PairedScore(pair.a, pair.a_correct),
                       PairedScore(pair.b, pair.b_correct), SuiteSpeedup(std::exp(pair.log_ratio)),
                       Winner(in, pair),
                       pair.log_ratio > 0   ? 1
                       : pair.log_ratio < 0 ? -1
                                            : 0});
  }
  return s;
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

std::string TableCellLine(std::string text, std::size_t max_chars) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return ShortenText(std::move(text), max_chars);
}

SuiteReportView BuildSuiteReportView(const SuiteReportInput& in) {
  SuiteReportView view;
  view.title = "kernelpro suite: " + in.title;
  view.suite = in.title;
  view.optimize = in.mode == "optimize";
  view.baseline = in.baseline;
  view.other_baseline = OtherBaseline(in.baseline);
  view.count_header = in.mode == "optimize" ? "seeds" : "candidates";
  view.incomplete = in.incomplete;
  view.header = SuiteHeaderFacts(in);
  view.measurement = in.measurement;
  view.conventions = kConventions;
  view.bands = BandLabels(in.stats);
  for (const auto& [level, group] : in.stats.levels) {
    view.groups.push_back(GroupView(LevelLabel(level), group, false, view.bands));
    view.groups.back().level = level;
  }
  view.groups.push_back(GroupView("overall", in.stats.overall, true, view.bands));
  for (double cap : kCaps) view.caps.push_back(CapLabel(cap));
  for (const SuiteProblemRow& row : in.rows) view.problems.push_back(ProblemView(in, row));
  if (in.comparison) view.comparison = ComparisonOf(in);
  return view;
}

std::string RenderSuiteHtml(const SuiteReportInput& input) {
  return RenderSuiteReportHtml(BuildSuiteReportView(input));
}

std::string RenderSuiteMarkdown(const SuiteReportInput& input) {
  return RenderSuiteReportMarkdown(BuildSuiteReportView(input));
}

SuiteReportTexts RenderSuiteReports(const SuiteReportInput& input) {
  const SuiteReportView view = BuildSuiteReportView(input);
  return {RenderSuiteReportHtml(view), RenderSuiteReportMarkdown(view), RenderSuiteCsv(input),
          SuiteReportJson(input)};
}

std::string RenderSuiteCsv(const SuiteReportInput& in) {
  std::ostringstream out;
  out << "key,level,status,correct,speedup,speedup_low,speedup_high,other_speedup,reference_ms,"
         "kernel_ms,sol_fraction,noisy,seeds,candidates,best,run_report,message,seconds,"
         "peak_device_bytes\n";
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
        Plain(row.sol_fraction),
        row.noisy ? "true" : "false",
        std::to_string(row.seeds),
        std::to_string(row.candidates),
        row.best,
        row.run_report,
        row.message,
        Plain(row.seconds),
        row.peak_device_bytes ? std::to_string(*row.peak_device_bytes) : "",
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
    problems.push_back(
        Json{{"key", row.key},
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
             {"sol_fraction", NumberOrNull(row.sol_fraction)},
             {"noisy", row.noisy},
             {"shapes", row.shapes},
             {"seeds", row.seeds},
             {"candidates", row.candidates},
             {"best", row.best},
             {"run_report", row.run_report},
             {"message", row.message},
             {"seconds", NumberOrNull(row.seconds)},
             {"peak_device_bytes",
              row.peak_device_bytes ? Json(*row.peak_device_bytes) : Json(nullptr)}});
  }
  Json report{{"title", in.title},
              {"mode", in.mode},
              {"baseline", in.baseline},
              {"incomplete", in.incomplete.empty() ? Json(nullptr) : Json(in.incomplete)},
              {"tasks",
               {{"total", in.tasks_total},
                {"finished", in.tasks_finished},
                {"pending", in.tasks_pending},
                {"damaged", in.tasks_damaged}}},
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
