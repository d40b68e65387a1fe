#include "tools/render.h"

#include <algorithm>
#include <sstream>

#include "core/text.h"

namespace kernelpro::tools {
namespace {

// How much of each finding to show: everything; without code; compact (no observed/threshold
// lines, top two recommendations), which keeps the advice when the budget is tight.
enum class Detail { kFull, kNoCode, kCompact };

std::string RenderFinding(const ToolOutput& o, std::size_t index, Detail detail) {
  const bool code = detail == Detail::kFull;
  const bool compact = detail == Detail::kCompact;
  std::ostringstream out;
  out << "### " << index << ". [" << Upper(SeverityName(o.severity)) << "] " << o.title << " ("
      << o.tool << ")\n";
  if (!o.summary.empty()) out << o.summary << "\n";
  if (!compact && !o.observed.empty()) {
    out << "- Observed: ";
    for (std::size_t i = 0; i < o.observed.size(); ++i) {
      out << (i ? "; " : "") << o.observed[i].name << " = "
          << FormatQuantity(o.observed[i].value, o.observed[i].unit);
    }
    out << "\n";
  }
  if (!compact && !o.thresholds.empty()) {
    out << "- Thresholds: ";
    for (std::size_t i = 0; i < o.thresholds.size(); ++i) {
      out << (i ? ", " : "") << o.thresholds[i].name << " "
          << FormatQuantity(o.thresholds[i].value, o.thresholds[i].unit);
    }
    out << "\n";
  }
  if (!o.root_cause.empty()) out << "- Root cause: " << o.root_cause << "\n";
  if (!o.recommendations.empty()) {
    out << "- Recommendations:\n";
    const std::size_t shown =
        compact ? std::min<std::size_t>(2, o.recommendations.size()) : o.recommendations.size();
    for (std::size_t i = 0; i < shown; ++i) {
      out << "  " << i + 1 << ". " << o.recommendations[i].action;
      if (!o.recommendations[i].expected_improvement.empty()) {
        out << " (expected: " << o.recommendations[i].expected_improvement << ")";
      }
      out << "\n";
    }
  }
  if (code && !o.code_example.empty()) {
    out << "```cuda\n" << o.code_example << (o.code_example.back() == '\n' ? "" : "\n") << "```\n";
  }
  return out.str();
}

std::string Render(const Analysis& analysis, const RenderOptions& options, std::size_t shown,
                   Detail detail) {
  std::ostringstream out;
  out << "## Automated Bottleneck Analysis\n\n";
  if (analysis.bottleneck) {
    out << "Stage-1 class: "
        << (*analysis.bottleneck == roofline::Bottleneck::kMixed
                ? std::string("mixed (neither roof dominates)")
                : std::string(roofline::BottleneckName(*analysis.bottleneck)) + "-bound")
        << ". ";
  }
  int counts[4] = {0, 0, 0, 0};
  std::size_t speed = 0;
  for (const ToolOutput& o : analysis.findings) {
    if (o.source != ToolSource::kEnergy) {
      ++counts[static_cast<int>(o.severity)];
      ++speed;
    }
  }
  const std::size_t ran = analysis.findings.size() + analysis.quiet.size();
  if (ran == 0) {
    out << "No tool could run: the record has none of the metrics they read (no ncu counters, SASS "
           "or GPU timeline; see the notes).\n";
  } else if (speed == 0) {
    out << "No speed bottleneck found by the " << ran << " tools that ran.\n";
  } else {
    out << speed << " finding(s):";
    bool first = true;
    for (Severity s : {Severity::kCritical, Severity::kHigh, Severity::kMedium, Severity::kLow}) {
      if (counts[static_cast<int>(s)] == 0) continue;
      out << (first ? " " : ", ") << counts[static_cast<int>(s)] << " " << SeverityName(s);
      first = false;
    }
    out << ". Address them in this order.\n";
  }
  std::size_t index = 0;
  bool energy_header = false;
  for (std::size_t i = 0; i < analysis.findings.size() && i < shown; ++i) {
    const ToolOutput& o = analysis.findings[i];
    if (o.source == ToolSource::kEnergy && !energy_header) {
      out << "\n## Energy Efficiency Notes\n\nWaste hidden under latency: it costs energy, not "
             "time. "
             "Act on it only when it does not slow the kernel.\n";
      energy_header = true;
    }
    out << "\n" << RenderFinding(o, ++index, detail);
  }
  if (shown < analysis.findings.size()) {
    out << "\n(" << analysis.findings.size() - shown
        << " lower-ranked finding(s) omitted for length.)\n";
  }
  if (options.list_skipped && !analysis.skipped.empty()) {
    out << "\nNot analysed (metrics missing): ";
    for (std::size_t i = 0; i < analysis.skipped.size(); ++i)
      out << (i ? ", " : "") << analysis.skipped[i].tool;
    out << ".\n";
  }
  return out.str();
}

}  // namespace

std::string RenderGuidance(const Analysis& analysis, const RenderOptions& options) {
  std::size_t shown = std::min(options.max_findings, analysis.findings.size());
  // Shrink in steps until the text fits: code examples first, then detail, then the
  // lowest-ranked findings; a hard cut only if even the headers do not fit.
  std::string text;
  for (Detail detail : {Detail::kFull, Detail::kNoCode, Detail::kCompact}) {
    if (detail == Detail::kFull && !options.code_examples) continue;
    text = Render(analysis, options, shown, detail);
    if (text.size() <= options.max_chars) return text;
  }
  while (text.size() > options.max_chars && shown > 0) {
    --shown;
    text = Render(analysis, options, shown, Detail::kCompact);
  }
  if (text.size() > options.max_chars) text = text.substr(0, options.max_chars);
  return text;
}

}  // namespace kernelpro::tools
