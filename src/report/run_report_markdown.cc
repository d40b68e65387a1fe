// report.md: the run report's view model (report/run_report_view.h) as Markdown.
#include <algorithm>
#include <sstream>

#include "report/run_report_view.h"

namespace kernelpro::report {
namespace {

using Out = std::ostringstream;

// "[`candidates/0042.py`](candidates/0042.py)", or the path as code when it may not be linked.
std::string MarkdownFile(const std::string& file) {
  return LinkableRunFile(file) ? "[`" + file + "`](" + file + ")" : "`" + file + "`";
}

// The longest run of backticks in `text`, so a Markdown fence around it can be longer.
std::size_t LongestBacktickRun(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

void WriteHeaderMarkdown(const RunReportView& view, Out& out) {
  out << "# " << view.title << "\n\n";
  for (const HeaderFact& fact : view.header) {
    out << "- " << fact.label << ": " << (fact.code ? "`" + fact.value + "`" : fact.value) << "\n";
  }
  out << "\n";
}

void WriteResultMarkdown(const RunReportView& view, Out& out) {
  out << "## Result\n\n";
  if (!view.best) {
    out << (view.reference_stays.empty()
                ? "No correct kernel was found."
                : "Best: the reference; " + view.reference_stays + " (no best.py is written).")
        << "\n\n";
    return;
  }
  const BestResultView& best = *view.best;
  out << "Best kernel: **" << best.name << "**";
  if (!best.file.empty()) {
    out << " (" << MarkdownFile(best.file) << ", saved as [`best.py`](best.py))";
  }
  out << ", **" << best.speedup << "x** over " << best.baseline << ", " << best.interval << ".\n\n";
  out << best.verdict << "\n\n";
  if (!best.shapes.empty()) out << best.shapes << "\n\n";
  if (best.energy_choice) out << *best.energy_choice << "\n\n";
  out << "Roofline: " << best.roofline << "\n\n";
  out << "Speed of light: " << best.speed_of_light << "\n\n";
  out << "### Best lineage\n\n";
  out << "| node | iteration | mode | status | speedup [interval] | verdict | strategy |\n";
  out << "|---|---|---|---|---|---|---|\n";
  for (int id : best.lineage) {
    const RunNodeView& f = view.nodes[id];
    if (f.root) {
      out << "| ROOT | | | reference | 1.00x | | |\n";
      continue;
    }
    out << "| " << f.name << " | " << f.iteration << " | " << f.mode << " | " << f.status << " | "
        << f.speedup_text << " | " << f.verdict << " | " << OneLineText(f.strategy) << " |\n";
  }
  out << "\n";
}

void WriteIterationsMarkdown(const RunReportView& view, Out& out) {
  out << "## Iterations\n\n";
  out << "| iteration | mode | expanded | outcome | tools that fired |\n";
  out << "|---|---|---|---|---|\n";
  for (const IterationView& it : view.iterations) {
    out << "| " << it.iteration << " | " << it.mode << " | " << it.expanded_name << " | "
        << it.outcome << " | " << (it.tools.empty() ? "-" : it.tools) << " |\n";
  }
  out << "\n";
}

void WriteEnergyMarkdown(const RunReportView& view, Out& out) {
  if (view.energy_proxy) {
    out << "## Energy\n\n" << view.energy_proxy->intro << "\n\n";
    out << "| node | speedup | proxy pJ | dram | uncoalesced | spills | instructions | "
           "energy reduction |\n";
    out << "|---|---|---|---|---|---|---|---|\n";
    for (const EnergyProxyRow& row : view.energy_proxy->rows) {
      out << "| " << row.name << " | " << row.speedup << " | ";
      if (row.missing) {
        out << "none: ncu lacks " << *row.missing << " | | | | | |\n";
        continue;
      }
      out << row.total << " | " << row.dram << " | " << row.uncoalesced << " | " << row.spills
          << " | " << row.instructions << " | " << row.reduction << " |\n";
    }
    out << "\n";
  }
  if (!view.measured_energy) return;
  const MeasuredEnergySection& measured = *view.measured_energy;
  if (!view.energy_proxy) out << "## Energy\n\n";
  out << "### Measured with NVML\n\n";
  if (!measured.rows.empty()) {
    out << "Energy per call after the search, the reference and the fastest kernels measured "
           "back to back in one session: "
        << measured.method << ".\n\n";
    out << "| kernel | speedup | mJ per call | interval | power | energy reduction |\n";
    out << "|---|---|---|---|---|---|\n";
    for (const MeasuredEnergyCells& row : measured.rows) {
      out << "| " << row.name << " | " << row.speedup << " | " << row.mj << " | " << row.interval
          << " | " << row.power << " | " << row.reduction << " |\n";
    }
    out << "\n";
  }
  for (const std::string& remark : measured.remarks) out << "- " << remark << "\n";
  if (!measured.remarks.empty()) out << "\n";
}

void WriteToolCallsMarkdown(const RunReportView& view, Out& out) {
  const std::size_t total = view.tool_call_count;
  if (total == 0) return;
  out << "## The programmer's tool calls\n\n"
      << total << " call" << (total == 1 ? "" : "s")
      << " (CUTLASS code search and layout probes); each with the first line of its answer.\n\n";
  for (const ToolCallRow& call : view.tool_calls) {
    out << "- iteration " << call.iteration << ": `" << call.line << "`\n";
  }
  if (view.tool_calls_over_cap > 0) {
    out << "- ... " << view.tool_calls_over_cap << " more (the run store keeps them all)\n";
  }
  out << "\n";
}

void WriteTreeMarkdown(const RunReportView& view, int id, int depth, Out& out) {
  const RunNodeView& f = view.nodes[id];
  out << std::string(2 * depth, ' ') << "- **" << f.name << "**";
  if (f.root) {
    out << " (the reference; visits " << f.visits << ", mean reward " << f.mean_reward << ")";
  } else {
    out << " it " << f.iteration << " · " << f.mode << " · " << f.status_text;
    if (!f.verdict.empty()) out << " · " << f.verdict;
    out << " · reward " << f.reward << " · visits " << f.visits;
    if (f.terminal) out << " · terminal";
    if (!f.file.empty()) out << " · " << MarkdownFile(f.file);
    // Why a failed node failed, in a line (the HTML report holds the head of the errors).
    if (!f.first_error_line.empty()) out << " — " << f.first_error_line;
  }
  out << "\n";
  for (int child : f.children) WriteTreeMarkdown(view, child, depth + 1, out);
}

void WriteBestKernelAndNotesMarkdown(const RunReportView& view, Out& out) {
  if (view.best && !view.best->best_kernel.empty()) {
    const std::string& best_py = view.best->best_kernel;
    const std::string fence(std::max<std::size_t>(3, LongestBacktickRun(best_py) + 1), '`');
    out << "## Best kernel\n\n[`best.py`](best.py), " << view.best->name << ":\n\n"
        << fence << "python\n"
        << best_py << fence << "\n\n";
  }
  if (!view.notes.empty()) {
    out << "## Notes\n\n";
    for (const std::string& note : view.notes) out << "- " << note << "\n";
    out << "\n";
  }
}

}  // namespace

std::string RenderRunReportMarkdown(const RunReportView& view) {
  Out out;
  WriteHeaderMarkdown(view, out);
  WriteResultMarkdown(view, out);
  WriteIterationsMarkdown(view, out);
  WriteEnergyMarkdown(view, out);
  WriteToolCallsMarkdown(view, out);
  out << "## Search tree\n\n";
  WriteTreeMarkdown(view, search::Tree::kRootId, 0, out);
  out << "\n";
  WriteBestKernelAndNotesMarkdown(view, out);
  return out.str();
}

}  // namespace kernelpro::report
