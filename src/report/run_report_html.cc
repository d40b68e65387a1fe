// report.html: the run report's view model (report/run_report_view.h) as one offline page, with
// inline CSS and the figures of report/charts.h as inline SVG.
#include <algorithm>
#include <sstream>
#include <string_view>

#include "core/text.h"
#include "report/run_report_view.h"
#include "report/svg.h"

namespace kernelpro::report {
namespace {

using Out = std::ostringstream;

// Text from the run (strategies, compiler errors, paths, labels) as HTML text or attribute value.
// Control characters other than tab and newline (terminal colour codes in build logs) are dropped:
// HTML does not allow them.
std::string Html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (c == '\'') {
      out += "&#39;";
    } else if ((u >= 0x20 && u != 0x7f) || c == '\n' || c == '\t') {
      out += c;
    }
  }
  return out;
}

constexpr const char* kHtmlStyle = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
       background: #fff; max-width: 78em; margin: 1.5em auto; padding: 0 1.5em; }
h1 { font-size: 1.6em; margin-bottom: .4em; }
h2 { font-size: 1.3em; margin-top: 1.6em; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 1.1em; margin-top: 1.2em; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
            font-size: 13px; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #d1d9e0; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
table.facts th { white-space: nowrap; }
td.num { white-space: nowrap; }
.ok { color: #1a7f37; }
.fail { color: #cf222e; }
.muted { color: #59636e; }
.verdict { padding: .5em .8em; border-left: 4px solid #1a7f37; background: #f0fff4; }
.verdict.noise { border-left-color: #9a6700; background: #fff8c5; }
.bar { display: inline-block; width: 8em; height: .75em; margin-left: .5em; background: #eaeef2;
       vertical-align: middle; }
.bar > span { display: block; height: 100%; background: #2da44e; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 1.5em; }
ul.tree { padding-left: 0; }
ul.tree li { margin: .15em 0; }
ul.tree ul { border-left: 1px dotted #9198a1; }
summary { cursor: pointer; }
.node { margin: .3em 0 .6em 1.2em; }
.node p { margin: .2em 0; }
pre { background: #f6f8fa; border: 1px solid #d1d9e0; padding: .6em; margin: .3em 0;
      white-space: pre-wrap; overflow-wrap: anywhere; }
pre.code { white-space: pre; overflow-x: auto; overflow-wrap: normal; }
figure { margin: 1em 0 1.5em; }
figcaption { color: #59636e; font-size: 13px; margin-top: .3em; max-width: 60em; }
)";

// A bar whose length is the node's speedup on a scale where the longest bar is the best kernel or
// the reference (1x), whichever is faster; "" without a speedup.
std::string HtmlBar(const std::optional<RatioInterval>& speedup, double best) {
  if (!speedup || best <= 0) return "";
  double fraction = std::clamp(speedup->estimate / std::max(best, 1.0), 0.0, 1.0);
  return "<span class=\"bar\" title=\"" + FormatFixed(speedup->estimate) +
         "x\"><span style=\"width:" + FormatFixed(100 * fraction, 1) + "%\"></span></span>";
}

std::string HtmlStatus(const RunNodeView& f) {
  // An LLM failure is grey, as in the tree figure: no kernel failed.
  const bool grey = f.root || f.status == "llm_error";
  const char* cls = grey ? "muted" : f.correct ? "ok" : "fail";
  return std::string("<span class=\"") + cls + "\">" + Html(f.status_text) + "</span>";
}

// The candidate file as code, linked (relative to report.html, which sits in the run directory)
// when it may be.
std::string HtmlFile(const std::string& file) {
  const std::string code = "<code>" + Html(file) + "</code>";
  return LinkableRunFile(file) ? "<a href=\"" + Html(file) + "\">" + code + "</a>" : code;
}

std::string HtmlNodeLink(int id) {
  return "<a href=\"#" + NodeName(id) + "\">" + NodeName(id) + "</a>";
}

// The scale of the bars: the best kernel's speedup; the reference's 1x without one.
double BarScale(const RunReportView& view) { return view.best ? view.best->estimate : 1.0; }

void WriteHead(const RunReportView& view, Out& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << Html(view.title) << "</title>\n<style>" << kHtmlStyle << "</style>\n"
      << "</head>\n<body>\n";
  out << "<h1>" << Html(view.title) << "</h1>\n";
  out << "<table class=\"facts\">\n";
  for (const HeaderFact& fact : view.header) {
    out << "<tr><th>" << Html(fact.label) << "</th><td>"
        << (fact.code ? "<code>" + Html(fact.value) + "</code>" : Html(fact.value))
        << "</td></tr>\n";
  }
  out << "</table>\n";
}

void WriteResult(const RunReportView& view, Out& out) {
  out << "<h2>Result</h2>\n";
  if (!view.best) {
    out << "<p>"
        << (view.reference_stays.empty() ? std::string("No correct kernel was found.")
                                         : Html("Best: the reference; " + view.reference_stays +
                                                " (no best.py is written)."))
        << "</p>\n";
    return;
  }
  const BestResultView& best = *view.best;
  const double scale = BarScale(view);
  out << "<p>Best kernel: <strong>" << HtmlNodeLink(best.node) << "</strong>";
  if (!best.file.empty()) {
    out << " (" << HtmlFile(best.file) << ", saved as " << HtmlFile("best.py") << ")";
  }
  out << ", <strong>" << best.speedup << "x</strong> over " << Html(best.baseline) << ", "
      << best.interval << ".</p>\n";
  out << "<p class=\"verdict" << (best.clearly_faster ? "" : " noise") << "\">"
      << Html(best.verdict) << "</p>\n";
  if (!best.shapes.empty()) out << "<p>" << Html(best.shapes) << "</p>\n";
  if (best.energy_choice) out << "<p>" << Html(*best.energy_choice) << "</p>\n";
  out << "<p>Roofline: " << Html(best.roofline) << "</p>\n";
  out << "<p>Speed of light: " << Html(best.speed_of_light) << "</p>\n";
  out << "<h3>Best lineage</h3>\n<table>\n";
  out << "<tr><th>node</th><th>iteration</th><th>mode</th><th>status</th>"
      << "<th>speedup [interval]</th><th>verdict</th><th>strategy</th></tr>\n";
  for (int id : best.lineage) {
    const RunNodeView& f = view.nodes[id];
    if (f.root) {
      out << "<tr><td>ROOT</td><td></td><td></td><td>reference</td><td class=\"num\">1.00x"
          << HtmlBar(RatioInterval{1, 1, 1, 0}, scale) << "</td><td></td><td></td></tr>\n";
      continue;
    }
    out << "<tr><td>" << HtmlNodeLink(id) << "</td><td>" << f.iteration << "</td><td>"
        << Html(f.mode) << "</td><td>" << Html(f.status) << "</td><td class=\"num\">"
        << f.speedup_text << HtmlBar(f.speedup, scale) << "</td><td>" << Html(f.verdict)
        << "</td><td>" << Html(f.strategy) << "</td></tr>\n";
  }
  out << "</table>\n";
}

// ---- Figures (report/charts.h), drawn from the same facts as the tables

std::string SpeedupFigure(const RunReportView& view) {
  std::vector<SpeedupChartCandidate> candidates;
  for (const RunNodeView& f : view.nodes) {
    if (f.root) continue;
    candidates.push_back({f.iteration, f.name, f.status, f.speedup, f.noisy});
  }
  return SpeedupChart(view.chart_iterations, candidates);
}

std::string TreeFigure(const RunReportView& view) {
  std::vector<TreeChartNode> nodes;
  for (const RunNodeView& f : view.nodes) {
    std::string tooltip = f.name + ": " + f.status_text + ", visits " + std::to_string(f.visits);
    if (!f.root) {
      tooltip = f.name + " (iteration " + std::to_string(f.iteration) + ", " + f.mode +
                "): " + f.status_text + (f.verdict.empty() ? "" : ", " + f.verdict) + ", visits " +
                std::to_string(f.visits);
      if (!f.strategy.empty()) tooltip += "\n" + OneLineText(f.strategy, 160);
    }
    nodes.push_back({f.id, f.parent, f.name, f.status, f.visits, tooltip});
  }
  return TreeChart(nodes, view.best ? std::optional<int>(view.best->node) : std::nullopt);
}

// The roofline figure with its caption, or a sentence saying why there is none.
std::string RooflineFigure(const RooflineFigureView& figure) {
  if (figure.device != "cuda") {
    return "<p class=\"muted\">No roofline chart: this run measured on " + Html(figure.device) +
           ", and a roofline is a GPU's (its memory bandwidth and peak FLOP/s, with the kernels' "
           "DRAM traffic counted by ncu).</p>\n";
  }
  if (!figure.has_flops) {
    return "<p class=\"muted\">No roofline chart: the run has no Stage-1 analysis with the "
           "problem's FLOPs, so neither the roofs nor the points are known.</p>\n";
  }
  const std::string chart = RooflineChart(figure.chart);
  if (chart.empty()) {
    return "<p class=\"muted\">No roofline chart: neither the reference's time nor a profiled "
           "candidate is known.</p>\n";
  }
  Out out;
  out << "<figure>\n"
      << chart << "<figcaption>Roofline of " << Html(figure.chart.gpu_name) << " ("
      << Html(figure.chart.precision) << "). Height: the problem's "
      << svg::WithUnit(figure.flops, "FLOP")
      << " (Stage 1) over the median time, so the ratio of two heights is their speedup. "
      << "Intensity: those FLOPs per byte the kernels moved to and from DRAM (ncu counters); the "
      << "reference at its minimum bytes, timed by " << figure.reference_timing << ". "
      << figure.placed << " of " << figure.correct
      << " correct candidates had counters.</figcaption>\n</figure>\n";
  return out.str();
}

void WriteFigures(const RunReportView& view, Out& out) {
  out << "<h2>Figures</h2>\n";
  out << "<figure>\n"
      << SpeedupFigure(view) << "<figcaption>The best speedup over the reference "
      << "after each iteration, with its interval as a band; each point a candidate with its "
      << "interval, a cross a candidate that failed.</figcaption>\n</figure>\n";
  out << "<figure>\n"
      << TreeFigure(view) << "<figcaption>The search tree: a node per candidate "
      << "under the node it was written from, coloured by its outcome, sized by its MCTS visits; "
      << "hover a node for its details.</figcaption>\n</figure>\n";
  out << RooflineFigure(view.roofline);
}

void WriteIterations(const RunReportView& view, Out& out) {
  out << "<h2>Iterations</h2>\n<table>\n";
  out << "<tr><th>iteration</th><th>mode</th><th>expanded</th><th>outcome</th>"
      << "<th>tools that fired</th></tr>\n";
  for (const IterationView& it : view.iterations) {
    out << "<tr><td>" << it.iteration << "</td><td>" << Html(it.mode) << "</td><td>"
        << (it.expanded == search::Tree::kRootId ? it.expanded_name : HtmlNodeLink(it.expanded))
        << "</td><td>" << Html(it.outcome) << "</td><td>"
        << (it.tools.empty() ? "-" : Html(it.tools)) << "</td></tr>\n";
  }
  out << "</table>\n";
}

void WriteEnergy(const RunReportView& view, Out& out) {
  if (view.energy_proxy) {
    out << "<h2>Energy</h2>\n<p>" << Html(view.energy_proxy->intro) << "</p>\n<table>\n";
    out << "<tr><th>node</th><th>speedup</th><th>proxy pJ</th><th>dram</th><th>uncoalesced</th>"
        << "<th>spills</th><th>instructions</th><th>energy reduction</th></tr>\n";
    for (const EnergyProxyRow& row : view.energy_proxy->rows) {
      out << "<tr><td>" << Html(row.name) << "</td><td>" << Html(row.speedup) << "</td>";
      if (row.missing) {
        out << "<td colspan=\"6\">none: ncu lacks " << Html(*row.missing) << "</td></tr>\n";
        continue;
      }
      out << "<td>" << row.total << "</td><td>" << row.dram << "</td><td>" << row.uncoalesced
          << "</td><td>" << row.spills << "</td><td>" << row.instructions << "</td><td>"
          << row.reduction << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  if (!view.measured_energy) return;
  const MeasuredEnergySection& measured = *view.measured_energy;
  if (!view.energy_proxy) out << "<h2>Energy</h2>\n";
  out << "<h3>Measured with NVML</h3>\n";
  if (!measured.rows.empty()) {
    out << "<p>Energy per call after the search, the reference and the fastest kernels "
           "measured back to back in one session: "
        << Html(measured.method) << ".</p>\n";
    out << "<table>\n<tr><th>kernel</th><th>speedup</th><th>mJ per call</th><th>interval</th>"
        << "<th>power</th><th>energy reduction</th></tr>\n";
    for (const MeasuredEnergyCells& row : measured.rows) {
      out << "<tr><td>" << Html(row.name) << "</td><td>" << Html(row.speedup) << "</td><td>"
          << row.mj << "</td><td>" << row.interval << "</td><td>" << row.power << "</td><td>"
          << Html(row.reduction) << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  if (!measured.remarks.empty()) {
    out << "<ul>\n";
    for (const std::string& remark : measured.remarks) out << "<li>" << Html(remark) << "</li>\n";
    out << "</ul>\n";
  }
}

void WriteToolCalls(const RunReportView& view, Out& out) {
  const std::size_t total = view.tool_call_count;
  if (total == 0) return;
  out << "<h2>The programmer's tool calls</h2>\n<details><summary>" << total << " call"
      << (total == 1 ? "" : "s")
      << " (CUTLASS code search and layout probes); each with the first line of its answer"
      << "</summary>\n<table>\n<tr><th>iteration</th><th>call</th></tr>\n";
  for (const ToolCallRow& call : view.tool_calls) {
    out << "<tr><td>" << call.iteration << "</td><td><code>" << Html(call.line)
        << "</code></td></tr>\n";
  }
  out << "</table>\n";
  if (view.tool_calls_over_cap > 0) {
    out << "<p>... " << view.tool_calls_over_cap << " more (the run store keeps them all)</p>\n";
  }
  out << "</details>\n";
}

void WriteTreeNode(const RunReportView& view, int id, Out& out) {
  const RunNodeView& f = view.nodes[id];
  out << "<li id=\"" << f.name << "\">";
  if (f.root) {
    out << "<b>ROOT</b> <span class=\"muted\">(the reference; visits " << f.visits
        << ", mean reward " << f.mean_reward << ")</span>\n";
  } else {
    out << "<details><summary><b>" << f.name << "</b> it " << f.iteration << " · " << Html(f.mode)
        << " · " << HtmlStatus(f);
    if (!f.verdict.empty()) out << " · " << Html(f.verdict);
    out << HtmlBar(f.speedup, BarScale(view));
    if (!f.correct && f.has_errors) {
      out << " <span class=\"muted\">" << Html(f.first_error_line) << "</span>";
    }
    out << "</summary>\n<div class=\"node\">\n";
    if (!f.strategy.empty()) out << "<p>Strategy: " << Html(f.strategy) << "</p>\n";
    out << "<p class=\"muted\">reward " << f.reward << " · visits " << f.visits;
    if (f.terminal) out << " · terminal";
    if (!f.file.empty()) out << " · " << HtmlFile(f.file);
    out << "</p>\n";
    if (!f.tools_fired.empty()) {
      out << "<p>Tools that fired: " << Html(Join(f.tools_fired, ", ")) << "</p>\n";
    }
    if (f.has_errors) out << "<pre>" << Html(f.error_excerpt) << "</pre>\n";
    out << "</div></details>\n";
  }
  if (!f.children.empty()) {
    out << "<ul>\n";
    for (int child : f.children) WriteTreeNode(view, child, out);
    out << "</ul>\n";
  }
  out << "</li>\n";
}

void WriteTree(const RunReportView& view, Out& out) {
  out << "<h2>Search tree</h2>\n";
  out << "<p class=\"muted\">Each node: iteration, mode, outcome with the speedup over the "
         "reference and its interval, and the noise verdict against its parent; open a node for "
         "its strategy, statistics, tools and errors.</p>\n";
  out << "<ul class=\"tree\">\n";
  WriteTreeNode(view, search::Tree::kRootId, out);
  out << "</ul>\n";
}

void WriteBestKernelAndNotes(const RunReportView& view, Out& out) {
  if (view.best && !view.best->best_kernel.empty()) {
    out << "<h2>Best kernel</h2>\n<details open><summary>" << HtmlFile("best.py") << ", "
        << view.best->name << "</summary>\n<pre class=\"code\">" << Html(view.best->best_kernel)
        << "</pre>\n</details>\n";
  }
  if (!view.notes.empty()) {
    out << "<h2>Notes</h2>\n<ul>\n";
    for (const std::string& note : view.notes) out << "<li>" << Html(note) << "</li>\n";
    out << "</ul>\n";
  }
}

}  // namespace

std::string RenderRunReportHtml(const RunReportView& view) {
  Out out;
  WriteHead(view, out);
  WriteResult(view, out);
  WriteFigures(view, out);
  WriteIterations(view, out);
  WriteEnergy(view, out);
  WriteToolCalls(view, out);
  WriteTree(view, out);
  WriteBestKernelAndNotes(view, out);
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace kernelpro::report
