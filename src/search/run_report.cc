#include "search/run_report.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

namespace kernelpro::search {
namespace {

std::string Fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Interval(const RatioInterval& r) {
  return Fixed(r.estimate) + "x [" + Fixed(r.low) + ", " + Fixed(r.high) + "]";
}

std::string NodeName(int id) { return id == Tree::kRootId ? "ROOT" : "n" + std::to_string(id); }

const NodeInfo* Info(const RunReportInput& in, int id) {
  if (!in.nodes) return nullptr;
  auto it = in.nodes->find(id);
  return it == in.nodes->end() ? nullptr : &it->second;
}

std::string Mode(const Node& node) { return node.mode ? agents::ToString(*node.mode) : "root"; }

std::string StatusText(const Node& node) {
  if (node.is_root()) return "reference";
  std::string text = node.status ? EvalStatusName(*node.status) : "?";
  if (node.correct() && node.speedup) text += " " + Interval(*node.speedup);
  return text;
}

std::vector<int> Lineage(const Tree& tree, int id) {
  std::vector<int> path;
  for (int n = id; n >= 0; n = tree.node(n).parent) path.insert(path.begin(), n);
  return path;
}

std::string LineageText(const Tree& tree, int id) {
  std::string text;
  for (int n : Lineage(tree, id)) {
    const Node& node = tree.node(n);
    if (!text.empty()) text += " -> ";
    text += NodeName(n);
    if (!node.is_root()) {
      text += " (" + Mode(node);
      if (node.correct() && node.speedup) text += ", " + Fixed(node.speedup->estimate) + "x";
      text += ")";
    }
  }
  return text;
}

std::string OneLine(std::string text, size_t max_chars = 100) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '|') c = ' ';
  }
  if (text.size() > max_chars) text = text.substr(0, max_chars - 3) + "...";
  return text;
}

std::string Stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

void TreeLines(const RunReportInput& in, int id, int depth, std::ostringstream& out) {
  const Tree& tree = *in.tree;
  const Node& node = tree.node(id);
  out << std::string(2 * depth, ' ') << "- **" << NodeName(id) << "**";
  if (node.is_root()) {
    out << " (the reference; visits " << node.visits << ", mean reward " << Fixed(node.MeanReward())
        << ")";
  } else {
    out << " it " << node.expansion + 1 << " · " << Mode(node) << " · " << StatusText(node);
    const NodeInfo* info = Info(in, id);
    if (info && !info->verdict.empty()) out << " · " << info->verdict;
    out << " · reward " << Fixed(node.reward) << " · visits " << node.visits;
    if (node.terminal) out << " · terminal";
    if (info && !info->file.empty()) out << " · `" << info->file << "`";
  }
  out << "\n";
  for (int child : node.children) TreeLines(in, child, depth + 1, out);
}

}  // namespace

std::optional<BestVerdict> JudgeBest(const Tree& tree) {
  auto best = tree.BestNode();
  if (!best) return std::nullopt;
  const Node& node = tree.node(*best);
  BestVerdict v;
  v.node = *best;
  v.speedup = node.speedup.value_or(RatioInterval{1, 1, 1, 0});
  v.parent = node.parent;
  const Node& parent = tree.node(node.parent);
  const bool against_parent = parent.correct() && parent.speedup.has_value();
  v.baseline = against_parent ? *parent.speedup : RatioInterval{1, 1, 1, 0};
  v.clearly_faster = ClearlyFaster(v.speedup, v.baseline);
  const std::string who =
      against_parent ? "its parent " + NodeName(v.parent) + " (" + Interval(v.baseline) + ")"
                     : std::string("the reference (1x)");
  if (v.clearly_faster) {
    v.text = NodeName(v.node) + " is faster than " + who +
             " beyond the timing noise: its interval lies above.";
  } else if (v.speedup.high < v.baseline.low) {
    v.text = NodeName(v.node) + " is slower than " + who +
             " beyond the timing noise: its interval lies below.";
  } else {
    v.text = NodeName(v.node) + "'s interval overlaps " + who +
             ": it is not shown to be faster beyond the timing noise.";
  }
  return v;
}

std::optional<RooflinePosition> BestRooflinePosition(const RunReportInput& in) {
  if (!in.stage1 || !in.tree || in.options.device != "cuda") return std::nullopt;
  auto best = in.tree->BestNode();
  if (!best) return std::nullopt;
  const NodeInfo* info = Info(in, *best);
  if (!info || !info->candidate_ms || *info->candidate_ms <= 0) return std::nullopt;
  return PositionAgainstRoofline(*in.stage1, *info->candidate_ms * 1e-3);
}

std::string RenderBestKernel(const RunReportInput& in, const std::string& source) {
  std::ostringstream out;
  const Tree& tree = *in.tree;
  auto verdict = JudgeBest(tree);
  const RunEnvironment& env = in.environment;
  out << "# kernelpro: the fastest validated kernel of the run in " << in.options.run_dir << "\n";
  out << "# problem:   " << in.options.problem << "\n";
  std::string device = env.device.empty() ? in.options.device : env.device;
  if (!env.device_name.empty()) device += ", " + env.device_name;
  out << "# device:    " << device << "\n";
  out << "# driver:    " << (env.driver.empty() ? "unknown" : env.driver) << "\n";
  out << "# toolchain: " << (env.toolchain.empty() ? "unknown" : env.toolchain) << "\n";
  if (verdict) {
    out << "# speedup:   " << Fixed(verdict->speedup.estimate) << "x over the reference, "
        << Fixed(100 * verdict->speedup.confidence, 0) << "% interval ["
        << Fixed(verdict->speedup.low) << ", " << Fixed(verdict->speedup.high)
        << "] (ratio of median times)\n";
    out << "# verdict:   " << verdict->text << "\n";
    out << "# lineage:   " << LineageText(tree, verdict->node) << "\n";
    const Node& node = tree.node(verdict->node);
    out << "# found in:  iteration " << node.expansion + 1 << " of " << in.summary.iterations_done
        << " (" << in.options.search << ", " << in.options.candidates
        << " candidates per iteration)\n";
  }
  out << "\n" << source;
  if (!source.empty() && source.back() != '\n') out << "\n";
  return out.str();
}

std::string RenderMarkdownReport(const RunReportInput& in) {
  std::ostringstream out;
  const Tree& tree = *in.tree;
  const OptimizeOptions& o = in.options;
  const RunEnvironment& env = in.environment;
  out << "# kernelpro run: " << Stem(o.problem) << "\n\n";
  out << "- Problem: `" << o.problem << "`\n";
  out << "- Device: " << (env.device.empty() ? o.device : env.device);
  if (!env.device_name.empty()) out << " (" << env.device_name << ")";
  if (!env.driver.empty()) out << ", driver " << env.driver;
  out << "\n";
  if (!env.toolchain.empty()) out << "- Toolchain: " << env.toolchain << "\n";
  if (!in.llm.empty()) out << "- LLM: " << in.llm << "\n";
  out << "- Search: " << o.search << ", " << in.summary.iterations_done << " of " << o.iterations
      << " iterations, " << o.candidates << " candidates each, feedback "
      << agents::ToString(o.feedback) << ", memory " << (o.memory ? "on" : "off") << ", seed "
      << o.seed << "\n";
  out << "- Stopped: " << in.summary.stop_message << "\n";
  out << "- LLM exchanges: " << in.summary.exchanges << ", cost $" << Fixed(in.summary.cost_usd, 4)
      << "\n";
  int correct = 0, evaluated = 0;
  for (const Node& node : tree.nodes()) {
    if (node.is_root()) continue;
    ++evaluated;
    correct += node.correct() ? 1 : 0;
  }
  out << "- Candidates: " << evaluated << " evaluated, " << correct << " correct\n";
  if (in.stage1) {
    out << "- Stage 1: " << BottleneckName(in.stage1->bottleneck) << "-bound on "
        << in.stage1->gpu_name << " (" << in.stage1->precision << ", confidence "
        << in.stage1->confidence << ")\n";
  }
  out << "\n";

  out << "## Result\n\n";
  auto verdict = JudgeBest(tree);
  if (!verdict) {
    out << "No correct kernel was found.\n\n";
  } else {
    const NodeInfo* info = Info(in, verdict->node);
    out << "Best kernel: **" << NodeName(verdict->node) << "**";
    if (info && !info->file.empty()) out << " (`" << info->file << "`, saved as `best.py`)";
    out << ", **" << Fixed(verdict->speedup.estimate) << "x** over the reference, "
        << Fixed(100 * verdict->speedup.confidence, 0) << "% interval ["
        << Fixed(verdict->speedup.low) << ", " << Fixed(verdict->speedup.high) << "].\n\n";
    out << verdict->text << "\n\n";
    if (auto position = BestRooflinePosition(in)) {
      out << "Roofline: " << position->summary << "\n\n";
    } else {
      out << "Roofline: unknown"
          << (o.device != "cuda" ? " (measured on " + o.device + ", not on a GPU)"
                                 : std::string(in.stage1 ? " (no timing of the best kernel)"
                                                         : " (no Stage-1 analysis)"))
          << ".\n\n";
    }
    out << "### Best lineage\n\n";
    out << "| node | iteration | mode | status | speedup [interval] | verdict | strategy |\n";
    out << "|---|---|---|---|---|---|---|\n";
    for (int id : Lineage(tree, verdict->node)) {
      const Node& node = tree.node(id);
      if (node.is_root()) {
        out << "| ROOT | | | reference | 1.00x | | |\n";
        continue;
      }
      const NodeInfo* ni = Info(in, id);
      out << "| " << NodeName(id) << " | " << node.expansion + 1 << " | " << Mode(node) << " | "
          << (node.status ? EvalStatusName(*node.status) : "?") << " | "
          << (node.correct() && node.speedup ? Interval(*node.speedup) : std::string("-")) << " | "
          << (ni ? ni->verdict : "") << " | " << (ni ? OneLine(ni->strategy) : "") << " |\n";
    }
    out << "\n";
  }

  out << "## Iterations\n\n";
  out << "| iteration | mode | expanded | outcome | tools that fired |\n";
  out << "|---|---|---|---|---|\n";
  for (int e = 0; e < tree.expansions(); ++e) {
    std::vector<int> children;
    for (const Node& node : tree.nodes()) {
      if (node.expansion == e) children.push_back(node.id);
    }
    if (children.empty()) continue;
    const Node& first = tree.node(children.front());
    std::string outcome, tools;
    for (int id : children) {
      const Node& node = tree.node(id);
      const NodeInfo* ni = Info(in, id);
      std::string text = NodeName(id) + " " + StatusText(node);
      if (ni && !ni->verdict.empty()) text += " " + ni->verdict;
      outcome += (outcome.empty() ? "" : "; ") + text;
      if (ni && !ni->tools_fired.empty()) {
        std::string names;
        for (const std::string& t : ni->tools_fired) names += (names.empty() ? "" : ", ") + t;
        tools += (tools.empty() ? "" : "; ") + NodeName(id) + ": " + names;
      }
    }
    out << "| " << e + 1 << " | " << Mode(first) << " | " << NodeName(first.parent) << " | "
        << outcome << " | " << (tools.empty() ? "-" : tools) << " |\n";
  }
  out << "\n";

  out << "## Search tree\n\n";
  TreeLines(in, Tree::kRootId, 0, out);
  out << "\n";

  if (!in.summary.notes.empty()) {
    out << "## Notes\n\n";
    for (const std::string& note : in.summary.notes) out << "- " << note << "\n";
    out << "\n";
  }
  return out.str();
}

}  // namespace kernelpro::search
