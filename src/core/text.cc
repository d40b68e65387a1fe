#include "core/text.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace kernelpro {

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view TrimLeft(std::string_view text) {
  while (!text.empty() && IsAsciiSpace(text.front())) text.remove_prefix(1);
  return text;
}

std::string_view TrimRight(std::string_view text) {
  while (!text.empty() && IsAsciiSpace(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view Trim(std::string_view text) { return TrimRight(TrimLeft(text)); }

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> pieces;
  while (true) {
    std::size_t at = text.find(separator);
    pieces.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) return pieces;
    text.remove_prefix(at + 1);
  }
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.emplace_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string CollapseWhitespace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char c : text) {
    if (IsAsciiSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::size_t Utf8Prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

std::string PrefixAtLineBreak(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = text.rfind('\n', max_bytes == 0 ? 0 : max_bytes - 1);
  if (cut == std::string::npos || cut == 0) return text.substr(0, Utf8Prefix(text, max_bytes));
  return text.substr(0, cut + 1);
}

std::string FirstNonBlankLine(std::string_view text) {
  for (const std::string& line : SplitLines(text)) {
    if (!Trim(line).empty()) return std::string(Trim(line));
  }
  return "";
}

std::string ShortenText(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  const std::size_t keep = max_bytes > 3 ? max_bytes - 3 : 0;
  return text.substr(0, Utf8Prefix(text, keep)) + "...";
}

std::string OneLineExcerpt(std::string_view text, std::size_t max_bytes) {
  std::string line = CollapseWhitespace(text);
  if (line.size() <= max_bytes) return line;
  return line.substr(0, Utf8Prefix(line, max_bytes)) + "...";
}

std::string FormatFixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string FormatGib(long long bytes, int digits) {
  return FormatFixed(static_cast<double>(bytes) / static_cast<double>(1LL << 30), digits);
}

std::pair<double, const char*> SiScaled(double value, double limit) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(value) >= limit && i < 5) {
    value /= 1000;
    ++i;
  }
  return {value, prefixes[i]};
}

std::string FormatSi(double value, const std::string& unit) {
  const auto [scaled, prefix] = SiScaled(value);
  return FormatFixed(scaled, *prefix ? 2 : 0) + " " + prefix + unit;
}

std::string FormatDuration(double seconds) {
  if (seconds >= 1e-3) return FormatFixed(seconds * 1e3, 3) + " ms";
  if (seconds >= 1e-6) return FormatFixed(seconds * 1e6, 1) + " us";
  return FormatFixed(seconds * 1e9, 1) + " ns";
}

std::string LastLine(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const std::size_t last = text.rfind('\n');
  return std::string(last == std::string_view::npos ? text : text.substr(last + 1));
}

std::string AsSentence(std::string text) {
  if (text.empty()) return text;
  text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  if (text.back() != '.') text += '.';
  return text;
}

std::string FormatSignificant(double value, int significant) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, value);
  return buf;
}

}  // namespace kernelpro
