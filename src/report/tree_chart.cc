// The search-tree figure of report.html (charts.h): a top-down layered drawing. Leaves take
// consecutive slots in depth-first order and a parent sits above the middle of its children, so
// no two edges cross and a subtree keeps together.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "report/charts.h"
#include "report/svg.h"

namespace kernelpro::report {
namespace {

// The statuses the legend lists, in this order (the first ones a user looks for).
const std::vector<std::pair<std::string, std::string>>& KnownStatuses() {
  static const std::vector<std::pair<std::string, std::string>> statuses = {
      {"reference", "#ffffff"},     {"correct", "#2da44e"},       {"incorrect", "#fb8f44"},
      {"compile_error", "#cf222e"}, {"runtime_error", "#a40e26"}, {"timeout", "#8250df"},
      {"llm_error", "#6e7781"},
  };
  return statuses;
}

double Radius(int visits) { return std::min(20.0, 5 + 2.5 * std::sqrt(std::max(visits, 0))); }

}  // namespace

std::string StatusColour(const std::string& status) {
  for (const auto& [name, colour] : KnownStatuses()) {
    if (name == status) return colour;
  }
  return "#d0d7de";
}

std::string TreeChart(const std::vector<TreeChartNode>& nodes, std::optional<int> best) {
  if (nodes.empty()) return "";
  std::map<int, const TreeChartNode*> by_id;
  std::map<int, std::vector<int>> children;
  int root = -1;
  for (const TreeChartNode& n : nodes) {
    by_id[n.id] = &n;
    if (n.parent < 0) {
      if (root < 0) root = n.id;
    } else {
      children[n.parent].push_back(n.id);
    }
  }
  if (root < 0) return "";

  // Slots and depths, depth first.
  std::map<int, double> slot;
  std::map<int, int> depth;
  int leaves = 0, max_depth = 0;
  std::function<void(int, int)> place = [&](int id, int d) {
    depth[id] = d;
    max_depth = std::max(max_depth, d);
    const std::vector<int>& kids = children[id];
    if (kids.empty()) {
      slot[id] = leaves++;
      return;
    }
    for (int kid : kids) place(kid, d + 1);
    slot[id] = (slot[kids.front()] + slot[kids.back()]) / 2;
  };
  place(root, 0);

  const double slot_width = 52, row_height = 76, legend_width = 170, margin = 30;
  const double width = std::max(560.0, margin * 2 + leaves * slot_width + legend_width);
  const double height = std::max(200.0, margin * 2 + max_depth * row_height + 24);
  auto px = [&](int id) { return margin + slot_width / 2 + slot[id] * slot_width; };
  auto py = [&](int id) { return margin + depth[id] * row_height; };

  svg::Document doc(width, height, "The search tree: nodes by status, sized by visits");
  doc.BeginGroup("edges");
  for (const TreeChartNode& n : nodes) {
    if (n.parent < 0 || !slot.count(n.id) || !slot.count(n.parent)) continue;
    doc.Line(px(n.parent), py(n.parent), px(n.id), py(n.id),
             svg::Style{"none", "#8c959f", 1.5, "", 1, "edge"});
  }
  doc.EndGroup();

  doc.BeginGroup("nodes");
  svg::TextStyle label;
  label.size = 11;
  label.anchor = svg::Anchor::kMiddle;
  std::set<std::string> shown;
  for (const TreeChartNode& n : nodes) {
    if (!slot.count(n.id)) continue;  // unreachable from ROOT: a damaged input, not drawn
    const double r = Radius(n.visits);
    shown.insert(n.status);
    if (best && *best == n.id) {
      doc.Circle(px(n.id), py(n.id), r + 4, svg::Style{"none", "#bf8700", 3, "", 1, "best"});
    }
    doc.Circle(px(n.id), py(n.id), r,
               svg::Style{StatusColour(n.status), "#24292f", 1, "", 1, "node status-" + n.status},
               n.tooltip.empty() ? n.label + ": " + n.status : n.tooltip);
    doc.Text(px(n.id), py(n.id) + r + 13, n.label, label);
  }
  doc.EndGroup();

  std::vector<svg::LegendEntry> legend;
  for (const auto& [name, colour] : KnownStatuses()) {
    if (shown.count(name))
      legend.push_back({svg::Style{colour, "#24292f", 1, "", 1, "swatch"}, name});
  }
  for (const std::string& name : shown) {
    bool known = false;
    for (const auto& [known_name, colour] : KnownStatuses()) known |= known_name == name;
    if (!known)
      legend.push_back({svg::Style{StatusColour(name), "#24292f", 1, "", 1, "swatch"}, name});
  }
  if (best)
    legend.push_back({svg::Style{"none", "#bf8700", 3, "", 1, "swatch"}, "the best kernel"});
  const double below = svg::DrawLegend(doc, width - legend_width + 10, margin, legend);
  svg::TextStyle note;
  note.size = 11;
  note.fill = "#59636e";
  doc.Text(width - legend_width + 10, below + 4, "size: MCTS visits", note);
  return doc.Render();
}

}  // namespace kernelpro::report
