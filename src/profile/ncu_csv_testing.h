// Large ncu CSVs for tests and benchmarks, made from a recorded one: the same profiler lines,
// header and units row, and its kernel rows repeated (with fresh launch IDs, in order) until there
// are `kernels` of them. What ncu writes for a program that launches many kernels, row for row.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kernelpro::profile::testing {

inline void WriteRepeatedNcuCsv(std::string_view recorded, std::size_t kernels, std::ostream& out) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < recorded.size();) {
    std::size_t end = recorded.find('\n', pos);
    if (end == std::string_view::npos) end = recorded.size();
    lines.push_back(recorded.substr(pos, end - pos));
    pos = end + 1;
  }
  std::size_t header = 0;
  while (header < lines.size() && lines[header].substr(0, 5) != "\"ID\",") ++header;
  std::vector<std::string_view> rows;  // the recorded kernel rows, each without its ID field
  for (std::size_t i = header + 2; i < lines.size(); ++i) {
    if (lines[i].substr(0, 1) != "\"") continue;
    std::size_t comma = lines[i].find("\",");
    if (comma != std::string_view::npos) rows.push_back(lines[i].substr(comma + 1));
  }
  for (std::size_t i = 0; i < header + 2 && i < lines.size(); ++i) out << lines[i] << "\n";
  for (std::size_t k = 0; k < kernels && !rows.empty(); ++k) {
    out << "\"" << k << "\"" << rows[k % rows.size()] << "\n";
  }
}

}  // namespace kernelpro::profile::testing
