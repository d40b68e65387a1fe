#include "profile/csv_record.h"

#include <utility>

#include "core/text.h"

namespace kernelpro::profile {
namespace {

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

bool EndsInsideQuotes(std::string_view line, CsvQuoteState* state) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (state->in_quotes) {
      if (c != '"') continue;
      if (i + 1 < line.size() && line[i + 1] == '"') {
        ++i;
      } else {
        state->in_quotes = false;
      }
      continue;
    }
    if (c == ',') {
      state->at_field_start = true;
      continue;
    }
    if (c == '"' && state->at_field_start) state->in_quotes = true;
    state->at_field_start = false;
  }
  state->at_field_start = false;  // the line break inside the field is a character of it
  return state->in_quotes;
}

bool TextLineSource::Next(std::string_view* line) {
  if (pos_ >= text_.size()) return false;
  std::size_t next = 0;
  *line = LineAt(text_, pos_, &next);
  pos_ = next;
  return true;
}

bool StreamLineSource::Next(std::string_view* line) {
  if (!std::getline(in_, buffer_)) return false;
  if (!buffer_.empty() && buffer_.back() == '\r') buffer_.pop_back();
  *line = buffer_;
  return true;
}

}  // namespace kernelpro::profile
