// The roofline figure of report.html (charts.h): log-log, the memory roof (bandwidth x intensity)
// up to the ridge point, the compute roof (the peak of the precision Stage 1 chose) after it.
#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "profile/ncu_catalog.h"
#include "report/charts.h"
#include "report/svg.h"

namespace kernelpro::report {
std::optional<double> DramBytesFromMetrics(const Json& metrics) {
  const Json values = JsonGet<Json>(
      JsonGet<Json>(JsonGet<Json>(metrics, "ncu", Json::object()), "aggregate", Json::object()),
      "values", Json::object());
  const std::optional<double> read =
      JsonNumber(values, std::string(profile::kNcuDramBytesRead).c_str());
  const std::optional<double> write =
      JsonNumber(values, std::string(profile::kNcuDramBytesWrite).c_str());
  if (!read || !write || *read < 0 || *write < 0 || *read + *write <= 0) return std::nullopt;
  return *read + *write;
}

std::string RooflineChart(const RooflineChartInput& in) {
  if (!(in.peak_flops > 0) || !(in.dram_bytes_per_s > 0)) return "";
  std::vector<const RooflinePoint*> points;
  for (const RooflinePoint& p : in.points) {
    if (p.intensity > 0 && p.flops_per_s > 0 && std::isfinite(p.intensity) &&
        std::isfinite(p.flops_per_s)) {
      points.push_back(&p);
    }
  }
  if (points.empty()) return "";
  const double ridge = in.peak_flops / in.dram_bytes_per_s;
  double x_lo = ridge, x_hi = ridge, y_lo = in.peak_flops, y_hi = in.peak_flops;
  for (const RooflinePoint* p : points) {
    x_lo = std::min(x_lo, p->intensity);
    x_hi = std::max(x_hi, p->intensity);
    y_lo = std::min(y_lo, p->flops_per_s);
  }
  // A little room around the points and the ridge; the peak's decade closes the top.
  x_lo /= 2;
  x_hi *= 2;
  y_lo /= 2;
  y_hi *= 1.2;
  svg::DecadeDomain(x_lo, x_hi);
  svg::DecadeDomain(y_lo, y_hi);

  const double width = 720, height = 380;
  const svg::Frame frame{64, 16, width - 64 - 176, height - 16 - 52};
  const svg::Scale x = svg::Scale::Log(x_lo, x_hi, frame.left, frame.right());
  const svg::Scale y = svg::Scale::Log(y_lo, y_hi, frame.bottom(), frame.top);
  svg::Document doc(width, height, "Roofline of " + in.gpu_name);
  svg::DrawAxes(doc, frame, x, y, svg::DecadeTicks(x_lo, x_hi), svg::DecadeTicks(y_lo, y_hi),
                "arithmetic intensity (FLOP per DRAM byte)", "achieved FLOP/s");

  // The roofs: from where the memory roof enters the frame, up to the ridge, then flat.
  const double x_start = std::max(x_lo, y_lo / in.dram_bytes_per_s);
  doc.Polyline({{x(x_start), y(x_start * in.dram_bytes_per_s)},
                {x(ridge), y(in.peak_flops)},
                {x(x_hi), y(in.peak_flops)}},
               svg::Style{"none", "#24292f", 2.5, "", 1, "roof"});
  doc.Line(x(ridge), y(in.peak_flops), x(ridge), frame.bottom(),
           svg::Style{"none", "#8c959f", 1, "3 3", 1, "ridge"});
  svg::TextStyle roof_label;
  roof_label.size = 11;
  roof_label.anchor = svg::Anchor::kEnd;
  doc.Text(frame.right() - 4, y(in.peak_flops) - 6,
           (in.precision.empty() ? std::string("peak ") : in.precision + " peak ") +
               svg::WithUnit(in.peak_flops, "FLOP/s"),
           roof_label);
  // The memory roof's label along its slope, a little to the left of the ridge.
  const double label_x = std::max(x_start * 1.5, ridge / 30);
  const double angle =
      std::atan2(y(label_x * 10 * in.dram_bytes_per_s) - y(label_x * in.dram_bytes_per_s),
                 x(label_x * 10) - x(label_x)) *
      180 / M_PI;
  roof_label.anchor = svg::Anchor::kStart;
  roof_label.rotate = angle;
  doc.Text(x(label_x), y(label_x * in.dram_bytes_per_s) - 6,
           "DRAM " + svg::WithUnit(in.dram_bytes_per_s, "B/s"), roof_label);
  svg::TextStyle ridge_label;
  ridge_label.size = 10;
  ridge_label.fill = "#59636e";
  doc.Text(x(ridge) + 4, frame.bottom() - 6, "ridge " + FormatFixed(ridge, 1) + " FLOP/B",
           ridge_label);

  // The reference first, then the candidates; the best on top with its ring.
  std::stable_sort(
      points.begin(), points.end(), [](const RooflinePoint* a, const RooflinePoint* b) {
        return (a->reference ? 0 : a->best ? 2 : 1) < (b->reference ? 0 : b->best ? 2 : 1);
      });
  svg::TextStyle point_label;
  point_label.size = 11;
  point_label.bold = true;
  doc.BeginGroup("points");
  for (const RooflinePoint* p : points) {
    const double px = x(p->intensity), py = y(p->flops_per_s);
    const std::string tooltip = p->tooltip.empty() ? p->label : p->tooltip;
    if (p->reference) {
      doc.Rect(px - 5, py - 5, 10, 10, svg::Style{"#24292f", "", 1, "", 1, "point reference"},
               tooltip);
    } else {
      if (p->best) doc.Circle(px, py, 9, svg::Style{"none", "#bf8700", 3, "", 1, "best"});
      doc.Circle(px, py, 5, svg::Style{"#0969da", "#ffffff", 1, "", 0.85, "point candidate"},
                 tooltip);
    }
    if (p->reference || p->best) {
      point_label.anchor = p->reference ? svg::Anchor::kEnd : svg::Anchor::kStart;
      doc.Text(p->reference ? px - 9 : px + 12, py + (p->reference ? 14 : -8), p->label,
               point_label);
    }
  }
  doc.EndGroup();

  svg::DrawLegend(doc, frame.right() + 16, frame.top + 12,
                  {{svg::Style{"#24292f", "", 1, "", 1, "swatch"}, "the reference"},
                   {svg::Style{"#0969da", "", 1, "", 1, "swatch"}, "a profiled candidate"},
                   {svg::Style{"none", "#bf8700", 3, "", 1, "swatch"}, "the best kernel"}});
  return doc.Render();
}

}  // namespace kernelpro::report
