#include "profile/counter_check.h"

#include <charconv>
#include <cmath>

namespace kernelpro::profile {
namespace {

constexpr double kMaxPercent = 110;
constexpr double kWrappedAround = 9223372036854775808.0;  // 2^63

// -5, 1.25e+20, nan: as short as reads back exactly, so the note shows what the file said.
std::string Shortest(double value) {
  char text[64];
  auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : "?";
}

}  // namespace

std::optional<std::string> ImplausibleCounterReason(std::string_view name, std::string_view unit,
                                                    double value) {
  if (!std::isfinite(value)) return "not a finite number";
  const bool device_property = name.starts_with("device__attribute_");
  if (value < 0 && !device_property) return "negative";
  const bool per_unit_maximum = name.find(".max") != std::string_view::npos;
  if (unit == "%" && value > kMaxPercent && !per_unit_maximum) return "above 110 %";
  if (std::fabs(value) >= kWrappedAround) return "2^63 or more (a wrapped-around counter)";
  return std::nullopt;
}

void DroppedCounters::Add(std::string_view metric, std::string_view unit, double value,
                          std::string_view reason, std::string_view kernel) {
  auto it = drops_.find(metric);
  if (it == drops_.end()) {
    Drop drop;
    drop.value = Shortest(value) + (unit.empty() ? "" : " " + std::string(unit));
    drop.reason = std::string(reason);
    drop.kernel = std::string(kernel);
    it = drops_.emplace(std::string(metric), std::move(drop)).first;
  }
  ++it->second.kernels;
}

std::vector<std::string> DroppedCounters::Notes(std::size_t limit) const {
  std::vector<std::string> notes;
  for (const auto& [metric, drop] : drops_) {
    if (notes.size() == limit) {
      notes.push_back("dropped " + std::to_string(drops_.size() - limit) +
                      " more implausible metric(s)");
      break;
    }
    std::string note =
        "dropped " + metric + " = " + drop.value + " (" + drop.reason + ") in " + drop.kernel;
    if (drop.kernels > 1) note += " and " + std::to_string(drop.kernels - 1) + " other kernel(s)";
    notes.push_back(std::move(note));
  }
  return notes;
}

}  // namespace kernelpro::profile
