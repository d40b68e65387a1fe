// CSV records as ncu writes them (RFC 4180: quoted fields may hold commas, line breaks and doubled
// quotes), read either from text in memory (NextCsvRecord, SplitCsv) or line by line while
// streaming: a LineSource hands out lines, and EndsInsideQuotes says whether a record goes on to
// the next line, so a reader can gather a record's lines before parsing it with NextCsvRecord.
//
// Nothing here knows ncu's columns; profile/ncu_csv.h reads its CSV with these pieces. The
// functions are stateless and thread-safe; a LineSource is used by one thread at a time.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace kernelpro::profile {

struct CsvRecord {
  std::vector<std::string> fields;
  bool complete = true;  // false when the text ended inside a quoted field (truncated input)
};

// Reads one RFC 4180 record starting at `*pos` and moves `*pos` past it and its line break
// ("\n" or "\r\n"). Quoted fields may hold commas, line breaks and doubled quotes (""); a quote
// inside an unquoted field is kept as a character. Returns false only when `*pos` is at the end.
bool NextCsvRecord(std::string_view text, std::size_t* pos, CsvRecord* record);

// All records of `text`, skipping empty lines.
std::vector<std::vector<std::string>> SplitCsv(std::string_view text);

// Where a record being read line by line stands at the end of a line, by NextCsvRecord's rules:
// a quote opens a field only at its start, "" inside quotes is a quote. Start each record with a
// fresh one and carry it over between the record's lines.
struct CsvQuoteState {
  bool in_quotes = false;
  bool at_field_start = true;
};

// Whether the record that starts (or continues) with `line` is still inside a quoted field at the
// end of it, that is whether its next line belongs to it too.
bool EndsInsideQuotes(std::string_view line, CsvQuoteState* state);

// One line at a time, without its line break ("\n" or "\r\n").
class LineSource {
 public:
  virtual ~LineSource() = default;
  // False at the end of the input. `*line` stays valid until the next call.
  virtual bool Next(std::string_view* line) = 0;
};

// The lines of text in memory, viewed in place: `text` must outlive the source.
class TextLineSource : public LineSource {
 public:
  explicit TextLineSource(std::string_view text) : text_(text) {}
  bool Next(std::string_view* line) override;

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// The lines of a stream, one held at a time.
class StreamLineSource : public LineSource {
 public:
  explicit StreamLineSource(std::istream& in) : in_(in) {}
  bool Next(std::string_view* line) override;

 private:
  std::istream& in_;
  std::string buffer_;
};

}  // namespace kernelpro::profile
