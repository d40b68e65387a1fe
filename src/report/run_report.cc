// The run report's public pieces (report/run_report.h). What the reports show is computed once
// in run_report_view.cc and formatted by run_report_markdown.cc and run_report_html.cc.
#include "report/run_report.h"

#include <filesystem>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/stats.h"
#include "core/text.h"
#include "eval/energy.h"
#include "report/run_report_view.h"
#include "store/run_layout.h"

namespace kernelpro::report {
namespace {

std::string MeasuredText(const MeasuredEnergyRow& row) {
  return Energy4(row.mj) + " mJ [" + Energy4(row.low) + ", " + Energy4(row.high) + "]";
}

// The first non-empty line of a tool's result: its answer in short.
std::string FirstResultLine(const std::string& result) {
  for (const std::string& line : SplitLines(result)) {
    if (!Trim(line).empty()) return std::string(Trim(line));
  }
  return "";
}

std::string ArgumentsText(const Json& arguments) {
  if (!arguments.is_object()) return arguments.is_null() ? "" : arguments.dump();
  std::string text;
  for (const auto& [key, value] : arguments.items()) {
    text += (text.empty() ? "" : ", ") + key + "=" +
            (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

}  // namespace

std::string ToolCallLine(const agents::ProgrammerToolCall& call, std::size_t max_chars) {
  std::string line = call.name + "(" + ArgumentsText(call.arguments) + ") → " +
                     (call.is_error ? "error: " : "") + FirstResultLine(call.result);
  return ShortenText(std::move(line), max_chars);
}

std::string ProblemName(const std::string& problem) {
  const std::filesystem::path path(problem);
  if (path.stem() == "problem" && path.has_parent_path() &&
      !path.parent_path().filename().empty()) {
    return path.parent_path().filename().string();
  }
  return path.stem().string();
}

std::optional<BestVerdict> JudgeBest(const search::Tree& tree,
                                     const std::map<int, search::NodeInfo>* nodes) {
  auto best = tree.BestNode();
  if (!best) return std::nullopt;
  const search::Node& node = tree.node(*best);
  BestVerdict v;
  v.node = *best;
  v.speedup = node.speedup.value_or(RatioInterval{1, 1, 1, 0});
  v.parent = node.parent;
  const search::Node& parent = tree.node(node.parent);
  const bool against_parent = parent.correct() && parent.speedup.has_value();
  v.baseline = against_parent ? *parent.speedup : RatioInterval{1, 1, 1, 0};
  const std::string who =
      against_parent ? "its parent " + NodeName(v.parent) + " (" + RatioText(v.baseline) + ")"
                     : std::string("the reference (1x)");
  v.noisy = node.noisy_timing;  // a noisy interval included (search/tree.h)
  if (nodes) {
    auto info = nodes->find(v.node);
    if (info != nodes->end() && info->second.noisy_timing) v.noisy = true;
  }
  // The words follow the interval; a noisy timing only says the margin is uncertain.
  v.clearly_faster = v.speedup.low > v.baseline.high;
  const std::string noisy =
      "its timing is noisy (its interval spans more than half its estimate, or its calls spread "
      "more than their median)";
  // Every best lies above the reference (search/best_rule.h); said when the parent is the baseline.
  const std::string above_reference = against_parent && !v.clearly_faster
                                          ? " Its whole interval lies above the reference's 1x."
                                          : "";
  if (v.clearly_faster) {
    v.text = NodeName(v.node) + " is faster than " + who +
             " beyond the timing noise: its interval " + "lies above" +
             (v.noisy ? ", though " + noisy +
                            ", so the margin is uncertain; rerun it on a "
                            "quieter machine to narrow it."
                      : ".") +
             above_reference;
  } else if (v.speedup.high < v.baseline.low) {
    v.text = NodeName(v.node) + " is slower than " + who +
             " beyond the timing noise: its interval lies below" +
             (v.noisy ? ", and " + noisy + "." : ".") + above_reference;
  } else {
    v.text = NodeName(v.node) + "'s interval overlaps " + who +
             ": it is not shown to be faster beyond the timing noise" +
             (v.noisy ? ", and " + noisy + "." : ".") + above_reference;
  }
  return v;
}

std::optional<std::string> ReferenceStaysText(const search::Tree& tree) {
  if (tree.BestNode()) return std::nullopt;
  const std::optional<int> fastest = tree.FastestCorrectNode();
  if (!fastest) return std::nullopt;
  const search::Node& node = tree.node(*fastest);
  const std::string speed = node.speedup ? " (" + RatioText(*node.speedup) + ")" : "";
  return "no kernel was shown faster than the reference: the fastest correct one, " +
         NodeName(*fastest) + speed +
         ", does not have its whole interval above 1x, so the reference stays the answer";
}

std::string RenderMarkdownReport(const RunReportInput& input) {
  return RenderRunReportMarkdown(BuildRunReportView(input));
}

std::string RenderHtmlReport(const RunReportInput& input) {
  return RenderRunReportHtml(BuildRunReportView(input));
}

Status WriteRunFiles(const RunReportInput& given, const std::optional<std::string>& best_source,
                     const std::string& out_dir) {
  RunReportInput input = given;
  if (input.best_source.empty() && best_source) input.best_source = *best_source;
  const store::RunLayout layout(out_dir.empty() ? input.config.run_dir : out_dir);
  std::error_code ec;
  std::filesystem::remove(layout.best_kernel(), ec);
  if (best_source) {
    if (Status s = WriteFileAtomically(layout.best_kernel(), RenderBestKernel(input, *best_source));
        !s.ok()) {
      return s;
    }
  }
  // Both reports from one view: the same facts, computed once.
  const RunReportView view = BuildRunReportView(input);
  if (Status s = WriteFileAtomically(layout.markdown_report(), RenderRunReportMarkdown(view));
      !s.ok()) {
    return s;
  }
  return WriteFileAtomically(layout.html_report(), RenderRunReportHtml(view));
}

std::optional<std::string> EnergyChoiceText(const search::Tree& tree) {
  const std::optional<int> best = tree.BestNode(), fastest = tree.FastestNode();
  if (!best || !fastest || *best == *fastest) return std::nullopt;
  const search::Node& b = tree.node(*best);
  const search::Node& f = tree.node(*fastest);
  if (!b.speedup || !f.speedup || !b.energy_reduction || !f.energy_reduction) return std::nullopt;
  // reduction = reference proxy / kernel proxy,
  // so proxy(b) / proxy(f) = reduction(f) / reduction(b).
  const double lower = 100 * (1 - *f.energy_reduction / *b.energy_reduction);
  return NodeName(*best) + " is the answer rather than the fastest, " + NodeName(*fastest) + " (" +
         RatioText(*f.speedup) + "): their speeds cannot be told apart (" + NodeName(*best) + ": " +
         RatioText(*b.speedup) + ") and " + NodeName(*best) + "'s energy proxy is " +
         FormatFixed(lower, lower < 0.1 ? 3 : 1) + "% lower (--energy aware).";
}

std::optional<MeasuredEnergyView> ViewMeasuredEnergy(const RunReportInput& in) {
  if (!in.summary.energy) return std::nullopt;
  const search::MeasuredEnergy& measured = *in.summary.energy;
  MeasuredEnergyView view;
  auto report = eval::EnergyReportFromStep(measured.step);
  if (!report.ok() || report->arms.size() != measured.nodes.size() + 1) {
    view.remarks.push_back("The stored NVML measurement is unreadable: " +
                           (report.ok() ? std::string("its arms do not match its kernels")
                                        : report.status().message()));
    return view;
  }
  view.method = report->method;
  for (std::size_t i = 0; i < report->arms.size(); ++i) {
    const eval::ArmEnergy& arm = report->arms[i];
    MeasuredEnergyRow row;
    row.name = i == 0 ? std::string("reference") : NodeName(measured.nodes[i - 1]);
    if (i > 0 && in.tree && in.tree->Contains(measured.nodes[i - 1])) {
      row.speedup = in.tree->node(measured.nodes[i - 1]).speedup;
    }
    row.mj = arm.per_call.median;
    row.low = arm.per_call.low;
    row.high = arm.per_call.high;
    row.confidence = arm.per_call.confidence;
    row.watts = arm.median_watts;
    if (i > 0) row.reduction = report->ratios[i - 1];
    if (!arm.warmup_settled) {
      view.remarks.push_back(row.name + "'s warm-up stopped at its " +
                             FormatFixed(arm.warmup_s, 1) + " s cap before the power settled.");
    }
    if (arm.per_call.low <= 0) {
      view.remarks.push_back(row.name +
                             " drew too little above idle in some windows for the "
                             "counter to resolve (dynamic energy at or below zero).");
    }
    view.rows.push_back(std::move(row));
  }
  if (view.rows.size() >= 3) {
    const MeasuredEnergyRow& a = view.rows[1];
    const MeasuredEnergyRow& b = view.rows[2];
    if (a.low <= b.high && b.low <= a.high) {
      view.remarks.push_back(a.name + " and " + b.name +
                             " spend the same energy per call within the measured noise "
                             "(their intervals overlap).");
    } else {
      const bool a_less = a.mj < b.mj;
      const MeasuredEnergyRow& less = a_less ? a : b;
      const MeasuredEnergyRow& more = a_less ? b : a;
      view.remarks.push_back(less.name + " spends less energy per call than " + more.name + " (" +
                             FormatFixed(more.mj / less.mj) +
                             "x, beyond the noise: their intervals do not overlap).");
    }
  }
  return view;
}

std::vector<std::string> MeasuredEnergyLines(const MeasuredEnergyView& view) {
  std::vector<std::string> lines;
  if (!view.rows.empty()) {
    std::string line =
        "energy: " + view.rows[0].name + " " + Energy4(view.rows[0].mj) + " mJ per call";
    for (std::size_t i = 1; i < view.rows.size(); ++i) {
      const MeasuredEnergyRow& row = view.rows[i];
      line += "; " + row.name + " " + MeasuredText(row);
      if (row.reduction) line += ", " + RatioText(*row.reduction) + " less";
    }
    lines.push_back(line + " (NVML)");
    lines.push_back("energy method: " + view.method);
  }
  for (const std::string& remark : view.remarks) lines.push_back("energy: " + remark);
  return lines;
}

}  // namespace kernelpro::report
