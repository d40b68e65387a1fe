// Names for enum values from one constexpr table, both ways, so a name is written once:
//
//   constexpr std::array<std::pair<Mode, const char*>, 2> kModes = {{{Mode::kA, "a"}, {Mode::kB,
//   "b"}}}; NameOf(kModes, Mode::kB)  → "b"        ValueOf(kModes, "a") → Mode::kA, ValueOf(kModes,
//   "c") → {} NameList(kModes)          → "a, b"     (for an error message that lists the choices)
//
// Every enum that has names keeps them in such a table: many of the names are stored (run
// databases, JSON trees, caches), so a name must never change once written, and one table is the
// one place to look.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
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
                         std::string_view text) {
  for (const auto& [v, name] : table) {
    if (text == name) return v;
  }
  return std::nullopt;
}

// The names in table order, separated by ", ".
template <typename E, std::size_t N>
std::string NameList(const std::array<std::pair<E, const char*>, N>& table) {
  std::string list;
  for (const auto& [v, name] : table) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

}  // namespace kernelpro
