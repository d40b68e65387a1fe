#include "profile/ncu_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "core/text.h"
#include "profile/counter_check.h"
#include "profile/derived_metrics.h"
#include "profile/ncu_aggregate.h"
#include "profile/ncu_catalog.h"
#include "profile/ncu_runner.h"

namespace kernelpro::profile {

double NcuKernel::duration_ns() const {
  auto it = values.find(std::string(kNcuDuration));
  return it == values.end() ? 0.0 : it->second;
}

namespace {

using ncu_csv_internal::Column;
using ncu_csv_internal::DetailedKernel;
using ncu_csv_internal::KernelIdentity;
using ncu_csv_internal::Longer;
using ncu_csv_internal::LongestKernels;
using ncu_csv_internal::RunningAggregate;

constexpr std::string_view kPermissionCode = "ERR_NVGPUCTRPERM";
constexpr std::string_view kPermissionText =
    "does not have permission to access NVIDIA GPU Performance Counters";
constexpr std::string_view kNoKernelsText = "No kernels were profiled";

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

// A snippet of the input for an error message: its first `limit` bytes, "..." when cut. Control
// and non-ASCII bytes become '?' (ShortenText of core/text.h would keep UTF-8 whole): the input
// may be binary, and messages end up in JSON, which must be valid UTF-8.
std::string PrintableSnippet(std::string_view text, std::size_t limit = 160) {
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
  if (!ncu_line.empty()) message += " ncu said: " + PrintableSnippet(Trim(ncu_line));
  return message;
}

// A cell as a number, NaN and infinities included (the caller says why it drops them); nullopt for
// "n/a", empty cells and text.
std::optional<double> ParseNcuCell(std::string_view cell) {
  cell = Trim(cell);
  if (cell.empty() || cell == "n/a" || cell == "N/A") return std::nullopt;
  std::string digits;
  digits.reserve(cell.size());
  for (char c : cell) {
    if (c != ',') digits += c;  // thousands separators
  }
  std::string_view number = digits;
  if (number.starts_with("+")) number.remove_prefix(1);
  double value = 0;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || end != number.data() + number.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    // 1e999 is a number too big for a double: as good as infinite. 1e-999 is as good as 0.
    return std::strtod(std::string(number).c_str(), nullptr);
  }
  if (error != std::errc()) return std::nullopt;
  return value;
}

class NcuCsvReader {
 public:
  explicit NcuCsvReader(const NcuReadOptions& options)
      : options_(options),
        longest_own_(std::max<std::size_t>(1, options.max_detailed_kernels)),
        longest_others_(options.select_candidate_kernels ? kMaxLongestOtherKernels : 0) {
    if (options_.select_candidate_kernels) matcher_.emplace(options_.entry_points);
  }

  Result<NcuView> Read(LineSource& lines) {
    bool first_line = true;
    std::string_view line;
    while (lines.Next(&line)) {
      if (first_line && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // UTF-8 BOM
      first_line = false;
      See(line);
      if (!have_header_) {
        FindHeader(line);
      } else if (!pending_.empty()) {
        pending_ += '\n';
        pending_ += line;
        if (!EndsInsideQuotes(line, &quotes_)) Row();
      } else if (line.starts_with("==")) {
        NoteMessage(line);
      } else if (!Trim(line).empty()) {
        pending_.assign(line);
        quotes_ = {};
        if (!EndsInsideQuotes(line, &quotes_)) Row();
      }
    }
    if (!pending_.empty()) Row();  // the input ended inside a quoted field
    if (rows_ == 0) return Failure();
    if (skipped_rows_ > 0) {
      view_.warnings.push_back(
          "skipped " + std::to_string(skipped_rows_) +
          " malformed ncu CSV row(s) (truncated output?); first: " + first_skip_reason_);
    }
    if (dropped_messages_ > 0) {
      view_.warnings.push_back("(" + std::to_string(dropped_messages_) +
                               " more distinct ncu messages not kept)");
    }
    Finish();
    return std::move(view_);
  }

 private:
  static constexpr std::size_t kMaxMessages = 100;
  static constexpr std::size_t kHeadChars = 200;

  // What Failure() needs of the whole text, kept as it streams by. Once a kernel row has been read
  // there is no failure to explain, and rows are not searched.
  void See(std::string_view line) {
    if (rows_ > 0) return;
    if (line.find(kPermissionCode) != std::string_view::npos ||
        line.find(kPermissionText) != std::string_view::npos) {
      saw_permission_text_ = true;
    }
    if (head_.size() < kHeadChars && (!head_.empty() || !Trim(line).empty())) {
      if (!head_.empty()) head_ += '\n';
      head_ += line.substr(0, kHeadChars);
    }
  }

  // Skips profiler messages and whatever the program printed, up to the header row.
  void FindHeader(std::string_view line) {
    if (line.starts_with("==")) {
      NoteMessage(line);
      return;
    }
    if (!line.starts_with("\"ID\"")) return;
    std::size_t pos = 0;
    CsvRecord record;
    NextCsvRecord(line, &pos, &record);
    if (IsHeader(record)) SetHeader(record.fields);
  }

  void SetHeader(const std::vector<std::string>& header) {
    have_header_ = true;
    header_size_ = header.size();
    id_column_ = ColumnIndex(header, "ID");
    name_column_ = ColumnIndex(header, "Kernel Name");
    block_column_ = ColumnIndex(header, "Block Size");
    grid_column_ = ColumnIndex(header, "Grid Size");
    columns_.resize(header.size());
    std::map<std::string_view, std::size_t> last;  // a repeated column: the last one counts
    for (std::size_t i = 0; i < header.size(); ++i) {
      columns_[i].name = header[i];
      if (IsMetricColumn(header[i])) last[header[i]] = i;
    }
    for (const auto& [name, i] : last) columns_[i].metric = true;
    auto duration = last.find(kNcuDuration);
    duration_column_ = duration == last.end() ? -1 : static_cast<int>(duration->second);
    own_ = RunningAggregate(columns_.size());
  }

  // From the units row, or (without one) before the first kernel row.
  void SetUnits(const std::vector<std::string>& units) {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      auto [factor, unit] = ToBaseUnit(i < units.size() ? Trim(units[i]) : std::string_view());
      columns_[i].factor = factor;
      columns_[i].unit = std::move(unit);
      columns_[i].sum = NcuAggregation(columns_[i].name, columns_[i].unit) == "sum";
    }
  }

  void Row() {
    std::size_t pos = 0;
    NextCsvRecord(pending_, &pos, &record_);
    pending_.clear();
    // The units row is the first record after the header; it has no ID.
    const bool is_units = first_record_ &&
                          static_cast<std::size_t>(id_column_) < record_.fields.size() &&
                          Trim(record_.fields[id_column_]).empty();
    if (first_record_) SetUnits(is_units ? record_.fields : std::vector<std::string>());
    first_record_ = false;
    if (!is_units) AddKernel();
  }

  void Skip(const std::string& reason) {
    if (skipped_rows_++ == 0) first_skip_reason_ = reason;
  }

  void AddKernel() {
    const std::size_t row = rows_ + skipped_rows_ + 1;
    if (!record_.complete) {
      Skip("row " + std::to_string(row) + " ends inside a quoted field");
      return;
    }
    if (record_.fields.size() != header_size_) {
      Skip("row " + std::to_string(row) + " has " + std::to_string(record_.fields.size()) +
           " fields, the header " + std::to_string(header_size_));
      return;
    }
    std::optional<int> id = ParseId(record_.fields[id_column_]);
    if (!id) {
      Skip("row " + std::to_string(row) + " has no launch ID: \"" +
           PrintableSnippet(record_.fields[id_column_], 40) + "\"");
      return;
    }
    KernelIdentity kernel;
    kernel.index = rows_++;
    kernel.id = *id;
    kernel.name = std::move(record_.fields[name_column_]);
    if (block_column_ >= 0) kernel.block_size = std::move(record_.fields[block_column_]);
    if (grid_column_ >= 0) kernel.grid_size = std::move(record_.fields[grid_column_]);
    values_.assign(columns_.size(), std::nan(""));
    std::string label;  // "kernel 3 (copy_kernel)", made only when a counter is dropped
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const Column& column = columns_[i];
      if (!column.metric) continue;
      std::optional<double> cell = ParseNcuCell(record_.fields[i]);
      if (!cell) continue;
      const double value = *cell * column.factor;
      if (auto why = ImplausibleCounterReason(column.name, column.unit, value)) {
        if (label.empty()) {
          label = "kernel " + std::to_string(kernel.id) + " (" + KernelBaseName(kernel.name) + ")";
        }
        dropped_.Add(column.name, column.unit, value, *why, label);
        continue;
      }
      values_[i] = value;
    }
    if (duration_column_ >= 0 && !std::isnan(values_[duration_column_])) {
      kernel.duration = values_[duration_column_];
      kernel.has_duration = true;
    }
    const bool own = !matcher_ || matcher_->IsOwn(kernel.name);
    durations_.push_back(kernel.duration);
    own_flags_.push_back(own);
    if (own) {
      own_.Add(kernel, values_);
      longest_own_.Offer(kernel, values_);
      own_kernels_.push_back(std::move(kernel));
    } else {
      longest_others_.Offer(kernel, values_);
    }
  }

  // The kernels kept, their aggregate and the notes on what was left out.
  void Finish() {
    std::vector<DetailedKernel> others;
    if (matcher_) {
      const std::vector<std::size_t> picked =
          LongestOtherKernels(durations_, own_flags_, options_.calls_libraries);
      for (DetailedKernel& k : longest_others_.kernels()) {
        if (std::binary_search(picked.begin(), picked.end(), k.identity.index)) {
          others.push_back(std::move(k));
        }
      }
      std::sort(others.begin(), others.end(), [](const DetailedKernel& a, const DetailedKernel& b) {
        return a.identity.index < b.identity.index;
      });
      const std::size_t own = own_kernels_.size();
      if (std::string note = KernelSelectionNote(own, others.size(), rows_); !note.empty()) {
        view_.notes.push_back(note);
      }
    }
    RunningAggregate aggregate = own_;
    for (const DetailedKernel& k : others) aggregate.Add(k.identity, k.values);
    view_.aggregate = aggregate.Finish(columns_);

    // Every counter for the longest kernels kept; identity and duration for the rest.
    std::vector<DetailedKernel*> detailed;
    for (DetailedKernel& k : longest_own_.kernels()) detailed.push_back(&k);
    for (DetailedKernel& k : others) detailed.push_back(&k);
    std::sort(detailed.begin(), detailed.end(),
              [](const DetailedKernel* a, const DetailedKernel* b) { return Longer(*a, *b); });
    const std::size_t limit = std::max<std::size_t>(1, options_.max_detailed_kernels);
    if (detailed.size() > limit) detailed.resize(limit);
    std::map<std::size_t, const std::vector<double>*> values_of;
    for (const DetailedKernel* k : detailed) values_of[k->identity.index] = &k->values;

    const std::size_t kept = own_kernels_.size() + others.size();
    view_.kernels.reserve(kept);
    auto own_it = own_kernels_.begin();
    auto other_it = others.begin();
    while (own_it != own_kernels_.end() || other_it != others.end()) {
      const bool take_own = other_it == others.end() || (own_it != own_kernels_.end() &&
                                                         own_it->index < other_it->identity.index);
      KernelIdentity& identity = take_own ? *own_it++ : (other_it++)->identity;
      view_.kernels.push_back(MakeKernel(std::move(identity), values_of));
    }
    if (kept > limit) {
      view_.notes.push_back("every counter kept for the " + std::to_string(limit) + " longest of " +
                            std::to_string(kept) +
                            " kernels; the others keep their name and duration, and the "
                            "aggregate covers them all");
    }
    for (std::string& note : dropped_.Notes()) view_.notes.push_back(std::move(note));
    DeriveMissingMetrics(view_);
  }

  NcuKernel MakeKernel(KernelIdentity identity,
                       const std::map<std::size_t, const std::vector<double>*>& values_of) const {
    NcuKernel kernel;
    kernel.id = identity.id;
    kernel.name = std::move(identity.name);
    kernel.block_size = std::move(identity.block_size);
    kernel.grid_size = std::move(identity.grid_size);
    auto values = values_of.find(identity.index);
    if (values == values_of.end()) {
      if (identity.has_duration) {
        kernel.values.emplace(columns_[duration_column_].name, identity.duration);
        kernel.units.emplace(columns_[duration_column_].name, columns_[duration_column_].unit);
      }
      return kernel;
    }
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const double value = (*values->second)[i];
      if (std::isnan(value)) continue;
      // ncu prints metric columns in name order, so the end is the right hint.
      kernel.values.insert_or_assign(kernel.values.end(), columns_[i].name, value);
      kernel.units.insert_or_assign(kernel.units.end(), columns_[i].name, columns_[i].unit);
    }
    return kernel;
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
    if (line.starts_with("==ERROR==") && first_error_.empty()) first_error_ = std::string(line);
    // ncu repeats some warnings for every kernel it replays; one copy says it.
    if ((line.starts_with("==WARNING==") || line.starts_with("==ERROR==")) &&
        std::find(view_.warnings.begin(), view_.warnings.end(), line) == view_.warnings.end()) {
      if (view_.warnings.size() < kMaxMessages) {
        view_.warnings.push_back(std::string(line));
      } else {
        ++dropped_messages_;
      }
    }
  }

  Status Failure() const {
    // The permission error may reach us without its ==ERROR== prefix (a wrapped line, or stderr
    // merged into stdout mid-line), so a match anywhere in the text counts.
    if (!permission_line_.empty() || saw_permission_text_) {
      return Status::Unavailable(PermissionMessage(permission_line_));
    }
    if (!no_kernels_line_.empty()) {
      return Status::NotFound("ncu profiled no kernels: \"" + PrintableSnippet(no_kernels_line_) +
                              "\" (hint: the kernel filter matched nothing; check the kernel "
                              "names, the NVTX range and --launch-skip/--launch-count)");
    }
    std::string said = first_error_.empty() ? "" : "; ncu said: " + PrintableSnippet(first_error_);
    if (Trim(head_).empty()) return Status::InvalidArgument("ncu output is empty");
    if (!have_header_) {
      return Status::InvalidArgument(
          "ncu output has no CSV header row (\"ID\",...,\"Kernel Name\",...); was it run with "
          "--csv --page raw? It starts: \"" +
          PrintableSnippet(Trim(head_), 80) + "\"" + said);
    }
    std::string first = skipped_rows_ > 0 ? " (first problem: " + first_skip_reason_ + ")" : "";
    return Status::InvalidArgument("ncu CSV has a header but no complete kernel row" + first +
                                   said);
  }

  const NcuReadOptions& options_;
  std::optional<CandidateKernelMatcher> matcher_;
  NcuView view_;

  // The header.
  bool have_header_ = false;
  std::size_t header_size_ = 0;
  std::vector<Column> columns_;
  int id_column_ = -1, name_column_ = -1, block_column_ = -1, grid_column_ = -1;
  int duration_column_ = -1;

  // The record being read: its text (several lines when a quoted field holds line breaks).
  std::string pending_;
  CsvQuoteState quotes_;
  CsvRecord record_;
  bool first_record_ = true;
  std::vector<double> values_;  // the current row's counters, by column

  // What the rows gave, bounded: per kernel only its identity (own) or duration (all).
  std::size_t rows_ = 0;
  std::vector<double> durations_;
  std::vector<bool> own_flags_;
  std::vector<KernelIdentity> own_kernels_;
  RunningAggregate own_{0};
  LongestKernels longest_own_, longest_others_;
  DroppedCounters dropped_;

  std::size_t skipped_rows_ = 0, dropped_messages_ = 0;
  bool saw_permission_text_ = false;
  std::string head_;
  std::string first_skip_reason_, permission_line_, no_kernels_line_, first_error_;
};

}  // namespace

std::optional<double> ParseNcuNumber(std::string_view cell) {
  std::optional<double> value = ParseNcuCell(cell);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

Result<NcuView> ReadNcuCsv(std::istream& in, const NcuReadOptions& options) {
  StreamLineSource lines(in);
  return NcuCsvReader(options).Read(lines);
}

Result<NcuView> ParseNcuCsv(std::string_view text, const NcuReadOptions& options) {
  TextLineSource lines(text);
  return NcuCsvReader(options).Read(lines);
}

}  // namespace kernelpro::profile
