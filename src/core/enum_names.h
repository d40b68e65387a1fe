// Names for enum values from one constexpr table, both ways, so a name is written once:
//
//   constexpr std::array<std::pair<Mode, const char*>, 2> kModes = {{{Mode::kA, "a"}, {Mode::kB, "b"}}};
//   NameOf(kModes, Mode::kB)  → "b"        ValueOf(kModes, "a") → Mode::kA, ValueOf(kModes, "c") → {}
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace kernelpro {

// "?" for a value the table does not hold.
template <typename E, std::size_t N>
const char* NameOf(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

// Exact, case-sensitive match; none when no entry has that name.
template <typename E, std::size_t N>
std::optional<E> ValueOf(const std::array<std::pair<E, const char*>, N>& table,
                         const std::string& text) {
  for (const auto& [v, name] : table) {
    if (text == name) return v;
  }
  return std::nullopt;
}

}  // namespace kernelpro
