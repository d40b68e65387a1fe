#include "core/number_check.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "core/text.h"

namespace kernelpro {
namespace {

// 1e+06 prints as 1000000, 0.001 as 0.001: bounds as a user would write them.
std::string BoundText(double bound) {
  if (bound == std::floor(bound) && std::fabs(bound) < 1e15) {
    return std::to_string(static_cast<long long>(bound));
  }
  std::string text = FormatFixed(bound, 6);
  while (text.back() == '0') text.pop_back();
  return text;
}

}  // namespace

std::string BoundsText(const NumberRange& r) {
  const bool no_max = r.max >= std::numeric_limits<double>::max();
  const bool no_min = r.min <= std::numeric_limits<double>::lowest();
  if (no_min && no_max) return "";
  if (no_max) return (r.min_exclusive ? "> " : ">= ") + BoundText(r.min);
  if (r.min_exclusive) return "> " + BoundText(r.min) + " and <= " + BoundText(r.max);
  if (no_min) return "<= " + BoundText(r.max);
  return "from " + BoundText(r.min) + " to " + BoundText(r.max);
}

std::string CheckNumber(const std::string& text, const NumberRange& range) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0;
  bool parsed = false;
  if (range.whole) {
    long long whole = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), whole);
    parsed = !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
    value = static_cast<double>(whole);
  } else {
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    parsed = !digits.empty() && error == std::errc() && end == digits.data() + digits.size() &&
             std::isfinite(value);
  }
  const bool below = range.min_exclusive ? !(value > range.min) : !(value >= range.min);
  if (!parsed || below || !(value <= range.max)) {
    const std::string bounds = BoundsText(range);
    return "'" + text + "' is not accepted: give " +
           (range.whole ? "a whole number" : "a finite number") +
           (bounds.empty() ? "" : " " + bounds);
  }
  return "";
}

}  // namespace kernelpro
