#include "profile/ncu_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "profile/ncu_catalog.h"

namespace kernelpro {

double NcuKernel::duration_ns() const {
  auto it = values.find(std::string(kNcuDuration));
  return it == values.end() ? 0.0 : it->second;
}

namespace {

constexpr std::string_view kPermissionCode = "ERR_NVGPUCTRPERM";
constexpr std::string_view kPermissionText =
    "does not have permission to access NVIDIA GPU Performance Counters";
constexpr std::string_view kNoKernelsText = "No kernels were profiled";

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string_view Trim(std::string_view text) {
  const std::string_view blanks = " \t\r\n";
  std::size_t begin = text.find_first_not_of(blanks);
  if (begin == std::string_view::npos) return {};
  std::size_t end = text.find_last_not_of(blanks);
  return text.substr(begin, end - begin + 1);
}

// The line starting at `pos`, without its line break; `*next` is where the following line starts.
std::string_view LineAt(std::string_view text, std::size_t pos, std::size_t* next) {
  std::size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) {
    *next = text.size();
    end = text.size();
  } else {
    *next = end + 1;
  }
  std::string_view line = text.substr(pos, end - pos);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Base units, so values compare across runs whatever --print-units said. Scaled forms are ncu's
// SI prefixes (K, M, G, T: powers of 1000) on a lowercase base unit, plus its time units.
std::pair<double, std::string> ToBaseUnit(std::string_view unit) {
  static const std::pair<std::string_view, std::pair<double, std::string_view>> kTimes[] = {
      {"usecond", {1e3, "nsecond"}}, {"msecond", {1e6, "nsecond"}}, {"second", {1e9, "nsecond"}},
      {"us", {1e3, "ns"}},           {"ms", {1e6, "ns"}},           {"s", {1e9, "ns"}},
  };
  for (const auto& [scaled, base] : kTimes) {
    if (unit == scaled) return {base.first, std::string(base.second)};
  }
  constexpr std::string_view kPrefixes = "KMGT";
  std::size_t power = unit.size() >= 3 ? kPrefixes.find(unit[0]) : std::string_view::npos;
  if (power != std::string_view::npos) {
    double factor = std::pow(1000.0, static_cast<double>(power + 1));
    std::string_view rest = unit.substr(1);
    if (rest == "Hz") return {factor, "hz"};
    if (rest[0] >= 'a' && rest[0] <= 'z') return {factor, std::string(rest)};
  }
  return {1.0, std::string(unit)};
}

std::optional<int> ParseId(std::string_view cell) {
  cell = Trim(cell);
  std::int64_t id = 0;
  auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), id);
  if (cell.empty() || error != std::errc() || end != cell.data() + cell.size() || id < 0 ||
      id > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(id);
}

int ColumnIndex(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (Trim(header[i]) == name) return static_cast<int>(i);
  }
  return -1;
}

bool IsHeader(const CsvRecord& record) {
  return record.complete && !record.fields.empty() && Trim(record.fields[0]) == "ID" &&
         ColumnIndex(record.fields, "Kernel Name") >= 0;
}

// ncu's metric names are all `unit__counter...`; the identity columns ("Process ID", "Context",
// "CC", ...) have no double underscore and are not measurements.
bool IsMetricColumn(std::string_view name) { return name.find("__") != std::string_view::npos; }

// A snippet of the input for an error message. Control and non-ASCII bytes become '?': the input
// may be binary, and messages end up in JSON, which must be valid UTF-8.
std::string Shorten(std::string_view text, std::size_t limit = 160) {
  std::string snippet(text.substr(0, limit));
  for (char& c : snippet) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return text.size() <= limit ? snippet : snippet + "...";
}

std::string PermissionMessage(std::string_view ncu_line) {
  std::string message =
      "ncu is not allowed to read the GPU performance counters (ERR_NVGPUCTRPERM): counters "
      "need permission, either the NVIDIA driver loaded with "
      "NVreg_RestrictProfilingToAdminUsers=0 or ncu run as root. The loop continues without ncu "
      "metrics.";
  if (!ncu_line.empty()) message += " ncu said: " + Shorten(Trim(ncu_line));
  return message;
}

class NcuCsvParser {
 public:
  explicit NcuCsvParser(std::string_view text) : text_(text) {}

  Result<NcuView> Parse() {
    if (StartsWith(text_, "\xEF\xBB\xBF")) text_.remove_prefix(3);  // UTF-8 byte order mark
    std::size_t pos = FindHeader();
    if (have_header_) ReadRows(pos);
    if (view_.kernels.empty()) return Failure();
    if (skipped_rows_ > 0) {
      view_.warnings.push_back(
          "skipped " + std::to_string(skipped_rows_) +
          " malformed ncu CSV row(s) (truncated output?); first: " + first_skip_reason_);
    }
    view_.aggregate = AggregateKernels(view_.kernels);
    return std::move(view_);
  }

 private:
  // Skips profiler messages and whatever the program printed, up to the header row. Returns the
  // position after the header (or the end).
  std::size_t FindHeader() {
    std::size_t pos = 0;
    while (pos < text_.size()) {
      std::size_t next = 0;
      std::string_view line = LineAt(text_, pos, &next);
      if (StartsWith(line, "==")) {
        NoteMessage(line);
      } else if (StartsWith(line, "\"ID\"")) {
        std::size_t after = pos;
        CsvRecord record;
        NextCsvRecord(text_, &after, &record);
        if (IsHeader(record)) {
          SetHeader(std::move(record.fields));
          return after;
        }
      }
      pos = next;
    }
    return pos;
  }

  void SetHeader(std::vector<std::string> header) {
    header_ = std::move(header);
    have_header_ = true;
    id_column_ = ColumnIndex(header_, "ID");
    name_column_ = ColumnIndex(header_, "Kernel Name");
    block_column_ = ColumnIndex(header_, "Block Size");
    grid_column_ = ColumnIndex(header_, "Grid Size");
  }

  void ReadRows(std::size_t pos) {
    bool first_record = true;
    while (pos < text_.size()) {
      std::size_t next = 0;
      std::string_view line = LineAt(text_, pos, &next);
      if (StartsWith(line, "==")) {
        NoteMessage(line);
        pos = next;
        continue;
      }
      if (Trim(line).empty()) {
        pos = next;
        continue;
      }
      CsvRecord record;
      NextCsvRecord(text_, &pos, &record);
      // The units row is the first record after the header; it has no ID.
      bool is_units = first_record && static_cast<std::size_t>(id_column_) < record.fields.size() &&
                      Trim(record.fields[id_column_]).empty();
      first_record = false;
      if (is_units) {
        units_ = std::move(record.fields);
        continue;
      }
      AddKernel(record);
    }
  }

  void Skip(const std::string& reason) {
    if (skipped_rows_++ == 0) first_skip_reason_ = reason;
  }

  void AddKernel(const CsvRecord& record) {
    std::size_t row = view_.kernels.size() + skipped_rows_ + 1;
    if (!record.complete) {
      Skip("row " + std::to_string(row) + " ends inside a quoted field");
      return;
    }
    if (record.fields.size() != header_.size()) {
      Skip("row " + std::to_string(row) + " has " + std::to_string(record.fields.size()) +
           " fields, the header " + std::to_string(header_.size()));
      return;
    }
    std::optional<int> id = ParseId(record.fields[id_column_]);
    if (!id) {
      Skip("row " + std::to_string(row) + " has no launch ID: \"" +
           Shorten(record.fields[id_column_], 40) + "\"");
      return;
    }
    NcuKernel kernel;
    kernel.id = *id;
    kernel.name = record.fields[name_column_];
    if (block_column_ >= 0) kernel.block_size = record.fields[block_column_];
    if (grid_column_ >= 0) kernel.grid_size = record.fields[grid_column_];
    for (std::size_t i = 0; i < header_.size(); ++i) {
      if (!IsMetricColumn(header_[i])) continue;
      std::optional<double> value = ParseNcuNumber(record.fields[i]);
      if (!value) continue;
      auto [factor, unit] = ToBaseUnit(i < units_.size() ? Trim(units_[i]) : std::string_view());
      // ncu prints metric columns in name order, so the end is the right hint.
      kernel.values.insert_or_assign(kernel.values.end(), header_[i], *value * factor);
      kernel.units.insert_or_assign(kernel.units.end(), header_[i], std::move(unit));
    }
    view_.kernels.push_back(std::move(kernel));
  }

  void NoteMessage(std::string_view line) {
    line = Trim(line);
    if (line.find(kPermissionCode) != std::string_view::npos ||
        line.find(kPermissionText) != std::string_view::npos) {
      if (permission_line_.empty()) permission_line_ = std::string(line);
    }
    if (line.find(kNoKernelsText) != std::string_view::npos && no_kernels_line_.empty()) {
      no_kernels_line_ = std::string(line);
    }
    if (StartsWith(line, "==ERROR==") && first_error_.empty()) first_error_ = std::string(line);
    // ncu repeats some warnings for every kernel it replays; one copy says it.
    if ((StartsWith(line, "==WARNING==") || StartsWith(line, "==ERROR==")) &&
        std::find(view_.warnings.begin(), view_.warnings.end(), line) == view_.warnings.end()) {
      view_.warnings.push_back(std::string(line));
    }
  }

  Status Failure() const {
    // The permission error may reach us without its ==ERROR== prefix (a wrapped line, or stderr
    // merged into stdout mid-line), so a match anywhere in the text counts.
    if (!permission_line_.empty() || text_.find(kPermissionCode) != std::string_view::npos ||
        text_.find(kPermissionText) != std::string_view::npos) {
      return Status::Unavailable(PermissionMessage(permission_line_));
    }
    if (!no_kernels_line_.empty()) {
      return Status::NotFound("ncu profiled no kernels: \"" + Shorten(no_kernels_line_) +
                              "\" (hint: the kernel filter matched nothing; check the kernel "
                              "names, the NVTX range and --launch-skip/--launch-count)");
    }
    std::string said = first_error_.empty() ? "" : "; ncu said: " + Shorten(first_error_);
    if (Trim(text_).empty()) return Status::InvalidArgument("ncu output is empty");
    if (!have_header_) {
      return Status::InvalidArgument(
          "ncu output has no CSV header row (\"ID\",...,\"Kernel Name\",...); was it run with "
          "--csv --page raw? It starts: \"" +
          Shorten(Trim(text_), 80) + "\"" + said);
    }
    std::string first = skipped_rows_ > 0 ? " (first problem: " + first_skip_reason_ + ")" : "";
    return Status::InvalidArgument("ncu CSV has a header but no complete kernel row" + first +
                                   said);
  }

  std::string_view text_;
  NcuView view_;
  bool have_header_ = false;
  std::vector<std::string> header_, units_;
  int id_column_ = -1, name_column_ = -1, block_column_ = -1, grid_column_ = -1;
  std::size_t skipped_rows_ = 0;
  std::string first_skip_reason_, permission_line_, no_kernels_line_, first_error_;
};

}  // namespace

bool NextCsvRecord(std::string_view text, std::size_t* pos, CsvRecord* record) {
  record->fields.clear();
  record->complete = true;
  std::size_t i = *pos;
  if (i >= text.size()) return false;
  std::string field;
  bool in_quotes = false;
  bool at_field_start = true;
  while (i < text.size()) {
    char c = text[i];
    if (in_quotes) {
      if (c != '"') {
        field += c;
        ++i;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        i += 2;
      } else {
        in_quotes = false;
        ++i;
      }
      continue;
    }
    if (c == ',') {
      record->fields.push_back(std::move(field));
      field.clear();
      at_field_start = true;
      ++i;
      continue;
    }
    if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      i += (c == '\r') ? 2 : 1;
      record->fields.push_back(std::move(field));
      *pos = i;
      return true;
    }
    if (c == '"' && at_field_start) {
      in_quotes = true;
    } else {
      field += c;
    }
    at_field_start = false;
    ++i;
  }
  record->complete = !in_quotes;
  record->fields.push_back(std::move(field));
  *pos = i;
  return true;
}

std::vector<std::vector<std::string>> SplitCsv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::size_t pos = 0;
  CsvRecord record;
  while (pos < text.size()) {
    std::size_t next = 0;
    if (Trim(LineAt(text, pos, &next)).empty()) {
      pos = next;
      continue;
    }
    NextCsvRecord(text, &pos, &record);
    records.push_back(std::move(record.fields));
  }
  return records;
}

std::optional<double> ParseNcuNumber(std::string_view cell) {
  cell = Trim(cell);
  if (cell.empty() || cell == "n/a" || cell == "N/A") return std::nullopt;
  std::string digits;
  digits.reserve(cell.size());
  for (char c : cell) {
    if (c != ',') digits += c;  // thousands separators
  }
  std::string_view number = digits;
  if (StartsWith(number, "+")) number.remove_prefix(1);
  double value = 0;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

Result<NcuView> ParseNcuCsv(std::string_view text) { return NcuCsvParser(text).Parse(); }

NcuKernel AggregateKernels(const std::vector<NcuKernel>& kernels) {
  NcuKernel aggregate;
  aggregate.name = "aggregate (" + std::to_string(kernels.size()) +
                   (kernels.size() == 1 ? " kernel)" : " kernels)");
  if (kernels.empty()) return aggregate;
  aggregate.block_size = kernels[0].block_size;
  aggregate.grid_size = kernels[0].grid_size;
  bool any_duration = false;
  for (const NcuKernel& kernel : kernels) {
    if (kernel.block_size != aggregate.block_size) aggregate.block_size.clear();
    if (kernel.grid_size != aggregate.grid_size) aggregate.grid_size.clear();
    if (kernel.duration_ns() > 0) any_duration = true;
  }
  struct Accumulator {
    double sum = 0, weighted_sum = 0, weight = 0;
    int count = 0;
    const std::string* unit = nullptr;
  };
  // Keys point into the kernels' maps, which outlive this function. Every map here is walked in
  // key order and hinted, so kernels with the same metrics cost no searches (a 200-launch profile
  // has 200 x 400 values).
  std::map<std::string_view, Accumulator> accumulators;
  for (const NcuKernel& kernel : kernels) {
    double weight = any_duration ? std::max(0.0, kernel.duration_ns()) : 1.0;
    auto hint = accumulators.begin();
    auto unit = kernel.units.begin();
    for (const auto& [name, value] : kernel.values) {
      hint = accumulators.try_emplace(hint, name);
      Accumulator& a = hint->second;
      ++hint;
      a.sum += value;
      a.weighted_sum += weight * value;
      a.weight += weight;
      ++a.count;
      while (unit != kernel.units.end() && unit->first < name) ++unit;
      if (a.unit == nullptr && unit != kernel.units.end() && unit->first == name) {
        a.unit = &unit->second;
      }
    }
  }
  for (const auto& [name, a] : accumulators) {
    std::string_view how = NcuAggregation(name, a.unit ? std::string_view(*a.unit) : "");
    double value;
    if (how == "sum") {
      value = a.sum;
    } else if (a.weight > 0) {
      value = a.weighted_sum / a.weight;
    } else {
      value = a.sum / a.count;  // only kernels without a duration have this metric
    }
    aggregate.values.emplace_hint(aggregate.values.end(), name, value);
    if (a.unit) aggregate.units.emplace_hint(aggregate.units.end(), name, *a.unit);
  }
  return aggregate;
}

}  // namespace kernelpro
