#include "report/svg.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace kernelpro::report::svg {
namespace {

// "%.*g" with no locale surprises: snprintf with the C locale's '.' is what every caller gets,
// since kernelpro never calls setlocale.
std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string StyleAttributes(const Style& style) {
  std::string out;
  if (!style.css_class.empty()) out += " class=\"" + Escape(style.css_class) + "\"";
  out += " fill=\"" + Escape(style.fill.empty() ? "none" : style.fill) + "\"";
  if (style.opacity < 1) out += " fill-opacity=\"" + Num(style.opacity) + "\"";
  if (!style.stroke.empty()) {
    out += " stroke=\"" + Escape(style.stroke) + "\"";
    if (style.stroke_width != 1) out += " stroke-width=\"" + Num(style.stroke_width) + "\"";
    if (!style.dash.empty()) out += " stroke-dasharray=\"" + Escape(style.dash) + "\"";
  }
  return out;
}

// A shape element, self-closed, or with a <title> child for its tooltip.
std::string Shape(const std::string& open, std::string_view tooltip, const char* name) {
  if (tooltip.empty()) return open + "/>\n";
  return open + "><title>" + Escape(tooltip) + "</title></" + name + ">\n";
}

double Step(double lo, double hi, int target) {
  const double span = hi - lo;
  if (!(span > 0) || target < 1) return 0;
  const double raw = span / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
  return nice * magnitude;
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((u >= 0x20 && u != 0x7f) || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string Num(double value) {
  if (!std::isfinite(value)) return "0";
  std::string text = Format("%.2f", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  if (text == "-0") text = "0";
  return text;
}

Scale::Scale(double lo, double hi, double from, double to, bool log)
    : lo_(lo), hi_(hi), from_(from), to_(to), log_(log) {}

Scale Scale::Linear(double lo, double hi, double from, double to) {
  return Scale(lo, hi, from, to, false);
}

Scale Scale::Log(double lo, double hi, double from, double to) {
  return Scale(lo, hi, from, to, true);
}

double Scale::operator()(double value) const {
  double a = lo_, b = hi_, v = value;
  if (log_) {
    if (!(value > 0) || !(lo_ > 0) || !(hi_ > 0)) return from_;
    a = std::log10(lo_);
    b = std::log10(hi_);
    v = std::log10(value);
  }
  if (b == a) return (from_ + to_) / 2;
  return from_ + (v - a) / (b - a) * (to_ - from_);
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (lo > hi) std::swap(lo, hi);
  const double step = Step(lo, hi, target);
  if (step == 0) return {lo};
  std::vector<double> ticks;
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-9; t += step) {
    // Multiples computed afresh, so 0.1 + 0.2 does not drift into 0.30000000000000004.
    ticks.push_back(std::round(t / step) * step);
  }
  return ticks;
}

void NiceDomain(double& lo, double& hi, int target) {
  if (lo > hi) std::swap(lo, hi);
  const double step = Step(lo, hi, target);
  if (step == 0) return;
  lo = std::floor(lo / step + 1e-9) * step;
  hi = std::ceil(hi / step - 1e-9) * step;
}

std::vector<double> DecadeTicks(double lo, double hi) {
  std::vector<double> ticks;
  if (!(lo > 0) || !(hi >= lo)) return ticks;
  for (int e = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
       e <= static_cast<int>(std::floor(std::log10(hi) + 1e-9)); ++e) {
    ticks.push_back(std::pow(10.0, e));
  }
  return ticks;
}

void DecadeDomain(double& lo, double& hi) {
  if (!(lo > 0) || !(hi > 0)) return;
  lo = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
  hi = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
  if (hi <= lo) hi = lo * 10;
}

std::string TickLabel(double value) {
  if (value == 0 || !std::isfinite(value)) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude < 1e-3) {
    const int exponent = static_cast<int>(std::floor(std::log10(magnitude) + 1e-9));
    return Format("%.3g", value / std::pow(10.0, exponent)) + "e" + std::to_string(exponent);
  }
  static const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int prefix = 0;
  double scaled = value;
  while (std::fabs(scaled) >= 1000 && prefix < 6) {
    scaled /= 1000;
    ++prefix;
  }
  return Format("%.3g", scaled) + kPrefixes[prefix];
}

std::string WithUnit(double value, std::string_view unit) {
  std::string text = TickLabel(value);
  std::string prefix;
  if (!text.empty() && std::isalpha(static_cast<unsigned char>(text.back())) &&
      text.find('e') == std::string::npos) {
    prefix = text.back();
    text.pop_back();
  }
  return text + " " + prefix + std::string(unit);
}

Document::Document(double width, double height, std::string title)
    : width_(width), height_(height), title_(std::move(title)) {}

void Document::Line(double x1, double y1, double x2, double y2, const Style& style) {
  Style stroked = style;
  if (stroked.stroke.empty()) stroked.stroke = "#1f2328";
  body_ += "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
           Num(y2) + "\"" + StyleAttributes(stroked) + "/>\n";
}

void Document::Rect(double x, double y, double width, double height, const Style& style,
                    std::string_view tooltip) {
  body_ +=
      Shape("<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(std::max(0.0, width)) +
                "\" height=\"" + Num(std::max(0.0, height)) + "\"" + StyleAttributes(style),
            tooltip, "rect");
}

void Document::Circle(double cx, double cy, double r, const Style& style,
                      std::string_view tooltip) {
  body_ += Shape("<circle cx=\"" + Num(cx) + "\" cy=\"" + Num(cy) + "\" r=\"" + Num(r) + "\"" +
                     StyleAttributes(style),
                 tooltip, "circle");
}

void Document::Polyline(const std::vector<std::pair<double, double>>& points, const Style& style,
                        bool closed, std::string_view tooltip) {
  if (points.empty()) return;
  std::string list;
  for (const auto& [x, y] : points) list += (list.empty() ? "" : " ") + Num(x) + "," + Num(y);
  const char* name = closed ? "polygon" : "polyline";
  body_ += Shape(std::string("<") + name + " points=\"" + list + "\"" + StyleAttributes(style),
                 tooltip, name);
}

void Document::Text(double x, double y, std::string_view text, const TextStyle& style) {
  std::string out = "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\"";
  if (!style.css_class.empty()) out += " class=\"" + Escape(style.css_class) + "\"";
  out += " font-size=\"" + Num(style.size) + "\"";
  if (style.anchor == Anchor::kMiddle) out += " text-anchor=\"middle\"";
  if (style.anchor == Anchor::kEnd) out += " text-anchor=\"end\"";
  if (style.bold) out += " font-weight=\"bold\"";
  out += " fill=\"" + Escape(style.fill) + "\"";
  if (style.rotate != 0) {
    out += " transform=\"rotate(" + Num(style.rotate) + " " + Num(x) + " " + Num(y) + ")\"";
  }
  body_ += out + ">" + Escape(text) + "</text>\n";
}

void Document::BeginGroup(std::string_view css_class) {
  body_ += "<g class=\"" + Escape(css_class) + "\">\n";
  ++open_groups_;
}

void Document::EndGroup() {
  if (open_groups_ == 0) return;  // an unpaired End would unbalance the markup
  body_ += "</g>\n";
  --open_groups_;
}

std::string Document::Render() const {
  std::string out = "<svg viewBox=\"0 0 " + Num(width_) + " " + Num(height_) +
                    "\" width=\"100%\" style=\"max-width:" + Num(width_) +
                    "px\" role=\"img\" aria-label=\"" + Escape(title_) +
                    "\" font-family=\"system-ui, sans-serif\">\n<title>" + Escape(title_) +
                    "</title>\n" + body_;
  for (int i = 0; i < open_groups_; ++i) out += "</g>\n";
  return out + "</svg>\n";
}

void DrawAxes(Document& doc, const Frame& frame, const Scale& x, const Scale& y,
              const std::vector<double>& x_ticks, const std::vector<double>& y_ticks,
              std::string_view x_title, std::string_view y_title) {
  doc.BeginGroup("axes");
  const Style grid{"none", "#d8dee4", 1, "", 1, "grid"};
  TextStyle label;
  label.size = 11;
  label.fill = "#59636e";
  for (double t : x_ticks) {
    const double px = x(t);
    doc.Line(px, frame.top, px, frame.bottom(), grid);
    label.anchor = Anchor::kMiddle;
    doc.Text(px, frame.bottom() + 15, TickLabel(t), label);
  }
  for (double t : y_ticks) {
    const double py = y(t);
    doc.Line(frame.left, py, frame.right(), py, grid);
    label.anchor = Anchor::kEnd;
    doc.Text(frame.left - 6, py + 4, TickLabel(t), label);
  }
  doc.Rect(frame.left, frame.top, frame.width, frame.height,
           Style{"none", "#59636e", 1, "", 1, "frame"});
  TextStyle title;
  title.size = 12;
  title.anchor = Anchor::kMiddle;
  doc.Text(frame.left + frame.width / 2, frame.bottom() + 34, x_title, title);
  title.rotate = -90;
  doc.Text(frame.left - 44, frame.top + frame.height / 2, y_title, title);
  doc.EndGroup();
}

double DrawLegend(Document& doc, double x, double y, const std::vector<LegendEntry>& entries) {
  doc.BeginGroup("legend");
  TextStyle text;
  text.size = 11;
  for (const LegendEntry& entry : entries) {
    doc.Circle(x + 5, y - 4, 5, entry.style);
    doc.Text(x + 15, y, entry.label, text);
    y += 16;
  }
  doc.EndGroup();
  return y;
}

}  // namespace kernelpro::report::svg
