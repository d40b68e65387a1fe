// The speedup-over-iterations figure of report.html (charts.h).
#include <algorithm>
#include <map>

#include "core/text.h"
#include "report/charts.h"
#include "report/svg.h"
#include "search/best_rule.h"

namespace kernelpro::report {

std::string SpeedupChart(int iterations, const std::vector<SpeedupChartCandidate>& candidates) {
  if (iterations < 1) return "";
  // The best so far after each iteration by the interval rule (search/best_rule.h, as the run
  // names its best); iteration 0 is the reference, 1x, which stays until a kernel's whole interval
  // lies above it.
  std::vector<RatioInterval> best(iterations + 1, RatioInterval{1, 1, 1, 0});
  std::vector<std::string> best_name(iterations + 1, "the reference");
  std::vector<bool> found(iterations + 1, false);
  std::vector<search::BestContender> seen;
  std::vector<const SpeedupChartCandidate*> seen_from;
  double top = 1;
  for (int i = 1; i <= iterations; ++i) {
    for (const SpeedupChartCandidate& c : candidates) {
      if (c.iteration != i || !c.speedup) continue;
      top = std::max(top, c.speedup->high);
      seen.push_back({*c.speedup, c.noisy});
      seen_from.push_back(&c);
    }
    best[i] = best[i - 1];
    best_name[i] = best_name[i - 1];
    found[i] = found[i - 1];
    if (auto pick = search::PickBest(seen)) {
      best[i] = *seen_from[*pick]->speedup;
      best_name[i] = seen_from[*pick]->name;
      found[i] = true;
    }
  }

  const double width = 720, height = 300;
  const svg::Frame frame{64, 16, width - 64 - 176, height - 16 - 52};
  double y_lo = 0, y_hi = top * 1.05;
  svg::NiceDomain(y_lo, y_hi);
  const svg::Scale x = svg::Scale::Linear(0, iterations, frame.left + 14, frame.right() - 14);
  const svg::Scale y = svg::Scale::Linear(y_lo, y_hi, frame.bottom(), frame.top);
  std::vector<double> x_ticks = svg::NiceTicks(0, iterations, std::min(iterations, 10));
  svg::Document doc(width, height, "Best speedup over the reference after each iteration");
  svg::DrawAxes(doc, frame, x, y, x_ticks, svg::NiceTicks(y_lo, y_hi),
                "iteration (0: the reference)", "speedup over the reference (x)");

  // The reference's 1x.
  doc.Line(frame.left, y(1), frame.right(), y(1),
           svg::Style{"none", "#59636e", 1, "5 4", 1, "reference-line"});
  svg::TextStyle note;
  note.size = 11;
  note.fill = "#59636e";
  note.anchor = svg::Anchor::kEnd;
  doc.Text(frame.right() - 4, y(1) + 13, "1x reference", note);

  // The best so far: a step line (it changes when an iteration finds a faster kernel) over the
  // band of its interval.
  std::vector<std::pair<double, double>> line, upper, lower;
  for (int i = 0; i <= iterations; ++i) {
    if (i > 0) {
      line.push_back({x(i), y(best[i - 1].estimate)});
      upper.push_back({x(i), y(best[i - 1].high)});
      lower.push_back({x(i), y(best[i - 1].low)});
    }
    line.push_back({x(i), y(best[i].estimate)});
    upper.push_back({x(i), y(best[i].high)});
    lower.push_back({x(i), y(best[i].low)});
  }
  std::vector<std::pair<double, double>> band = upper;
  band.insert(band.end(), lower.rbegin(), lower.rend());
  doc.Polyline(band, svg::Style{"#2da44e", "", 1, "", 0.2, "best-interval"}, true);
  doc.Polyline(line, svg::Style{"none", "#1a7f37", 2.5, "", 1, "best-line"});
  for (int i = 1; i <= iterations; ++i) {
    if (!found[i] || (i > 1 && best_name[i] == best_name[i - 1])) continue;
    doc.Circle(x(i), y(best[i].estimate), 3, svg::Style{"#1a7f37", "", 1, "", 1, "best-step"},
               "best after iteration " + std::to_string(i) + ": " + best_name[i] + " " +
                   RatioText(best[i]));
  }

  // Every candidate: a correct one as a point with its interval, a failed one as a cross on 0x.
  std::map<int, int> per_iteration, drawn;
  for (const SpeedupChartCandidate& c : candidates) ++per_iteration[c.iteration];
  doc.BeginGroup("candidates");
  for (const SpeedupChartCandidate& c : candidates) {
    if (c.iteration < 1 || c.iteration > iterations) continue;
    const int k = drawn[c.iteration]++;
    const double px = x(c.iteration) + (k - (per_iteration[c.iteration] - 1) / 2.0) * 7;
    if (c.speedup) {
      doc.Line(px, y(c.speedup->low), px, y(c.speedup->high),
               svg::Style{"none", "#0969da", 1.5, "", 1, "interval"});
      doc.Circle(px, y(c.speedup->estimate), 4,
                 svg::Style{"#0969da", "#ffffff", 1, "", 1, "candidate correct"},
                 c.name + " (iteration " + std::to_string(c.iteration) + "): " + c.status + " " +
                     RatioText(*c.speedup));
    } else {
      const std::string colour = StatusColour(c.status);
      const double py = y(y_lo);
      doc.Polyline({{px - 4, py - 4}, {px + 4, py + 4}},
                   svg::Style{"none", colour, 2, "", 1, "candidate failed"});
      doc.Polyline({{px - 4, py + 4}, {px + 4, py - 4}},
                   svg::Style{"none", colour, 2, "", 1, "candidate failed"}, false,
                   c.name + " (iteration " + std::to_string(c.iteration) + "): " + c.status);
    }
  }
  doc.EndGroup();

  svg::DrawLegend(doc, frame.right() + 16, frame.top + 12,
                  {{svg::Style{"#1a7f37", "", 1, "", 1, "swatch"}, "best so far"},
                   {svg::Style{"#2da44e", "", 1, "", 0.3, "swatch"}, "its interval"},
                   {svg::Style{"#0969da", "", 1, "", 1, "swatch"}, "a correct candidate"},
                   {svg::Style{StatusColour("compile_error"), "", 1, "", 1, "swatch"},
                    "a failed one (x on 0x)"}});
  return doc.Render();
}

}  // namespace kernelpro::report
