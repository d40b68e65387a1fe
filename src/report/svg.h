// A small builder of inline SVG figures for the run report (report.html): shapes, text, linear
// and log scales, "nice" ticks and a plotting frame with labelled axes. The report must stay one
// offline page, so a figure is plain SVG markup with no script, font, image or link outside it;
// every text put into a figure is escaped here, so callers pass raw run text (strategies, paths).
//
// Output is deterministic: coordinates are written with at most two decimals and no locale, so the
// same figure renders byte-identical text (the report's golden files depend on it).
//
// Plain values; no shared state. Safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelpro::report::svg {

// `text` as SVG/XML text or attribute value: & < > " ' escaped, control characters other than
// tab and newline dropped (XML does not allow them).
std::string Escape(std::string_view text);

// A coordinate or length: at most two decimals, trailing zeros dropped ("12", "12.5", "-0.25").
std::string Num(double value);

// Maps a domain [lo, hi] onto a pixel range [from, to] (to < from for a y axis that grows
// upwards), linearly or by log10. A log scale takes positive domains; values <= 0 map to `from`.
class Scale {
 public:
  static Scale Linear(double lo, double hi, double from, double to);
  static Scale Log(double lo, double hi, double from, double to);

  double operator()(double value) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  bool log() const { return log_; }

 private:
  Scale(double lo, double hi, double from, double to, bool log);
  double lo_, hi_, from_, to_;
  bool log_;
};

// Tick values for a linear axis over [lo, hi]: multiples of 1, 2 or 5 times a power of ten, about
// `target` of them, each within [lo, hi] (up to rounding). lo == hi gives that one value.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);
// [lo, hi] widened outwards to the nearest multiples of the step NiceTicks would pick.
void NiceDomain(double& lo, double& hi, int target = 5);

// Powers of ten within [lo, hi] (both > 0), for a log axis.
std::vector<double> DecadeTicks(double lo, double hi);
// [lo, hi] widened outwards to whole decades.
void DecadeDomain(double& lo, double& hi);

// A tick label with up to three significant digits: "0", "0.5", "1.25", "10", "250"; from 1000 up
// with an SI prefix ("1k", "4.8T"); below 0.001 in exponent form ("1e-4").
std::string TickLabel(double value);
// A quantity with its unit, the prefix beside the unit: "66.7 GFLOP/s", "4.8 TB/s", "250 B".
std::string WithUnit(double value, std::string_view unit);

// How a shape is drawn. Empty strings leave the attribute out (SVG defaults apply).
struct Style {
  std::string fill = "none";
  std::string stroke;
  double stroke_width = 1;
  std::string dash;       // stroke-dasharray, e.g. "4 3"
  double opacity = 1;     // fill-opacity
  std::string css_class;  // class attribute: what tests and the page's CSS look for
};

enum class Anchor { kStart, kMiddle, kEnd };

struct TextStyle {
  double size = 12;  // px
  Anchor anchor = Anchor::kStart;
  std::string fill = "#1f2328";
  bool bold = false;
  double rotate = 0;  // degrees around the text's own position (-90: reads bottom to top)
  std::string css_class;
};

// One SVG figure. Shapes are drawn in the order they are added; `tooltip` (when not empty) is a
// <title> child, which browsers show on hover without any script.
class Document {
 public:
  // `title` is the figure's accessible name (role="img" aria-label and a <title>).
  Document(double width, double height, std::string title);

  double width() const { return width_; }
  double height() const { return height_; }

  void Line(double x1, double y1, double x2, double y2, const Style& style);
  void Rect(double x, double y, double width, double height, const Style& style,
            std::string_view tooltip = "");
  void Circle(double cx, double cy, double r, const Style& style, std::string_view tooltip = "");
  // An open polyline (fill none unless the style says so) or, closed, a polygon.
  void Polyline(const std::vector<std::pair<double, double>>& points, const Style& style,
                bool closed = false, std::string_view tooltip = "");
  void Text(double x, double y, std::string_view text, const TextStyle& style);
  // A group of shapes: Begin/End must pair; `css_class` names what the group is.
  void BeginGroup(std::string_view css_class);
  void EndGroup();

  // The <svg> element with everything added, for inline use in an HTML page (the HTML parser puts
  // it in the SVG namespace, so it carries no xmlns and the page holds no URL); width 100% so it
  // scales to the page, the viewBox keeping its proportions.
  std::string Render() const;

 private:
  double width_, height_;
  std::string title_;
  std::string body_;
  int open_groups_ = 0;
};

// The plotting area of a chart inside its document, in pixels.
struct Frame {
  double left = 0, top = 0, width = 0, height = 0;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

// Draws the frame's box, grid lines and labels at `x_ticks` / `y_ticks`, and the axis titles
// (the y title rotated along the left edge).
void DrawAxes(Document& doc, const Frame& frame, const Scale& x, const Scale& y,
              const std::vector<double>& x_ticks, const std::vector<double>& y_ticks,
              std::string_view x_title, std::string_view y_title);

// A legend: one row per entry (a swatch of `style`, drawn as a circle, then its label), from
// (x, y) downwards. Returns the y below the last row.
struct LegendEntry {
  Style style;
  std::string label;
};
double DrawLegend(Document& doc, double x, double y, const std::vector<LegendEntry>& entries);

}  // namespace kernelpro::report::svg
